package disclosure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/gateway/catalog"
)

// where names the endpoint of v for messages.
func (v *view) where() string {
	if v.name != "" {
		return "profile " + v.name
	}
	return "this endpoint"
}

// unknown says a target was not found and suggests the closest names.
func (d *Disclosure) unknown(snap *catalog.Snapshot, v *view, kind, name string) string {
	what := "server, tool, skill or bundle"
	if kind != "" {
		what = kind
	}
	msg := fmt.Sprintf("unknown %s %q", what, name)
	var sugg []string
	if kind == "server" {
		sugg = closeNames(name, d.serverNames(snap, v), 3)
	} else {
		sugg = d.similarTools(snap, v, name)
		if kind == "" {
			sugg = append(closeNames(name, d.serverNames(snap, v), 1), sugg...)
			if len(sugg) > 3 {
				sugg = sugg[:3]
			}
		}
	}
	if len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(sugg, ", ") + "?"
	}
	if kind == "server" {
		return msg + " (find_tools without server searches every tool)"
	}
	return msg + " (find_tools searches every tool)"
}

// ToolRefusal says why the request's endpoint cannot call tool name, or
// returns "" when it serves it (or name is a meta-tool). It is the message
// of a direct tools/call's invalid-params error, and what call_tool says:
// a tool of another endpoint is named as such, one whose server is not
// ready comes with the server's state, and any other unknown name with
// the served tools whose names are closest.
func (d *Disclosure) ToolRefusal(snap *catalog.Snapshot, req Request, name string) string {
	if IsMeta(name) {
		return ""
	}
	v := d.view(req.Profile)
	it, ok := snap.Tool(name)
	switch {
	case ok && v.serves(it):
		return ""
	case ok && v.withheld != nil && v.withheld(it) != "":
		return fmt.Sprintf("tool '%s' is not served: %s", name, v.withheld(it))
	case ok:
		return fmt.Sprintf("tool '%s' is not served on %s (find_tools lists the tools served there)", name, v.where())
	}
	if d.opts.ToolPending != nil {
		if src, why := d.opts.ToolPending(name); why != "" && v.serves(&catalog.Item{Kind: catalog.Tool, Name: name, Source: src}) {
			return fmt.Sprintf("tool '%s' not found: %s", name, why)
		}
	}
	msg := fmt.Sprintf("tool '%s' not found", name)
	if sugg := d.similarTools(snap, v, name); len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(sugg, ", ") + "?"
	}
	return msg + " (find_tools searches every tool)"
}

// SimilarTools returns up to three tools of snap that the default endpoint
// serves whose names are closest to name, as a direct tools/call's refusal
// suggests them: for the gateway's own callers (a pipeline step, an
// executor calling back), whose unknown tool has no endpoint.
func (d *Disclosure) SimilarTools(snap *catalog.Snapshot, name string) []string {
	return d.similarTools(snap, d.view(""), name)
}

// similarTools returns up to three tools v serves whose names are closest
// to name (edit distance), or, when none is close, the best search hits
// for it.
func (d *Disclosure) similarTools(snap *catalog.Snapshot, v *view, name string) []string {
	var names []string
	for _, it := range snap.Tools() {
		if v.serves(it) {
			names = append(names, it.Name)
		}
	}
	if sugg := closeNames(name, names, 3); len(sugg) > 0 {
		return sugg
	}
	ix := d.index(snap)
	hits, _ := ix.search(name, func(dc *doc) bool { return v.serves(dc.item) }, 3)
	var out []string
	for _, h := range hits {
		out = append(out, ix.docs[h.doc].item.Name)
	}
	return out
}

// serverNames are the servers v may serve: the configured ones it takes,
// and the sources of the tools it serves (the gateway's own excepted).
func (d *Disclosure) serverNames(snap *catalog.Snapshot, v *view) []string {
	seen := map[string]bool{}
	for s := range d.servers {
		if len(v.servers) == 0 || v.servers[s] {
			seen[s] = true
		}
	}
	for _, it := range snap.Tools() {
		if it.Group == "" && !strings.Contains(it.Source, ":") && v.serves(it) {
			seen[it.Source] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// closeNames returns up to n of candidates whose names are close to name,
// closest first: within an edit distance of a third of name's length (at
// least 2), case ignored. Ties go to the candidate sharing more of name's
// words (split at _ and -), then by name.
func closeNames(name string, candidates []string, n int) []string {
	q := strings.ToLower(name)
	limit := max(2, len(q)/3)
	type scored struct {
		name   string
		dist   int
		shared int
	}
	var got []scored
	for _, c := range candidates {
		dist := editDistance(q, strings.ToLower(c))
		if dist > limit || c == name {
			continue
		}
		got = append(got, scored{c, dist, sharedWords(q, strings.ToLower(c))})
	}
	slices.SortFunc(got, func(a, b scored) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		if a.shared != b.shared {
			return b.shared - a.shared
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, s := range got {
		if len(out) == n {
			break
		}
		out = append(out, s.name)
	}
	return out
}

func sharedWords(a, b string) int {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' })
	}
	wb := split(b)
	n := 0
	for _, w := range split(a) {
		if slices.Contains(wb, w) {
			n++
		}
	}
	return n
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// noServer says why find_tools' server filter matched no tool: the server
// is not one this endpoint knows (with the closest names), or it is not
// ready. It is "" when the server is known and ready (the query found
// nothing) or the filter is a glob.
func (d *Disclosure) noServer(snap *catalog.Snapshot, req Request, server string) string {
	if isGlob(server) {
		return ""
	}
	v := d.view(req.Profile)
	if _, ok := d.groups[server]; ok {
		return ""
	}
	if slices.Contains(d.serverNames(snap, v), server) {
		if d.opts.ServerPending != nil {
			if why := d.opts.ServerPending(server); why != "" {
				return why + "; its tools are found once it is ready (skillgate servers shows its state)"
			}
		}
		return ""
	}
	msg := fmt.Sprintf("unknown server %q on %s", server, v.where())
	if sugg := closeNames(server, d.serverNames(snap, v), 3); len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(sugg, ", ") + "?"
	} else if names := d.serverNames(snap, v); len(names) > 0 {
		msg += "; the servers here are " + strings.Join(names, ", ")
	}
	return msg
}

// notReady says, for each server target, why it has no tools when its
// server is not ready.
func (d *Disclosure) notReady(targets []target) []string {
	if d.opts.ServerPending == nil {
		return nil
	}
	var out []string
	for _, t := range targets {
		if t.kind != "server" {
			continue
		}
		if why := d.opts.ServerPending(t.name); why != "" {
			out = append(out, why)
		}
	}
	return out
}

// notReadyNote is notReady for an answer's text.
func notReadyNote(why []string) string {
	if len(why) == 0 {
		return ""
	}
	return " Not ready: " + strings.Join(why, "; ") + "; its tools come once it is (skillgate servers shows the servers' states)."
}

// statelessTextMax bounds the definitions stateless activate writes into
// its text, in bytes; past it the text says how to get them.
const statelessTextMax = 32 << 10

// statelessText is activate's answer to a client without a session: what
// the targets, as the client wrote them, make available, and what calling
// them takes (name, description, input schema) in the text too: a host
// that hands the model only the text content must not lose the schemas.
// The full definitions are in the structured content.
func statelessText(asked []string, res ActivateResult, total int) string {
	for i := range asked {
		asked[i] = strings.TrimSpace(asked[i])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "This client has no session, so its tool list stays as it is. %d tool(s) of %s are available through call_tool(name, arguments)",
		total, strings.Join(asked, ", "))
	if total == 0 {
		b.WriteString(".")
		return b.String()
	}
	var defs bytes.Buffer
	for _, raw := range res.Tools {
		if defs.Len() > 0 {
			defs.WriteByte('\n')
		}
		defs.Write(callable(raw))
	}
	if defs.Len() > statelessTextMax {
		fmt.Fprintf(&b, ": %s. describe_tools(names) gives their definitions, up to 20 names at a time.", strings.Join(res.Available, ", "))
	} else {
		b.WriteString(". What calling them takes, one per line (describe_tools gives the full definitions):\n")
		b.Write(defs.Bytes())
	}
	if total > len(res.Available) {
		fmt.Fprintf(&b, "\nOnly the first %d are given; find_tools lists the rest.", len(res.Available))
	}
	return b.String()
}

// callable is a tool definition cut to what calling the tool takes (name,
// description, input schema), compact.
func callable(raw json.RawMessage) []byte {
	var t struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return raw
	}
	var in bytes.Buffer
	if len(t.InputSchema) > 0 && json.Compact(&in, t.InputSchema) == nil {
		t.InputSchema = in.Bytes()
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(t) != nil {
		return raw
	}
	return bytes.TrimRight(out.Bytes(), "\n")
}
