package config

import (
	"cmp"
	"fmt"
	"maps"
	"net/textproto"
	"slices"
	"strings"
)

// reservedHeaders are the request headers the gateway's HTTP client sets
// itself, by canonical name, with why a server's headers: cannot set them.
var reservedHeaders = map[string]string{
	"Host":                 "the host comes from url:; to reach a virtual host, put its name in url:",
	"Content-Type":         "the gateway sends JSON-RPC as application/json and sets it itself",
	"Content-Length":       "the gateway sets it from each request's body",
	"Transfer-Encoding":    "the gateway's HTTP client sets it",
	"Connection":           "the gateway's HTTP client manages its connections",
	"Accept":               "the MCP transport asks for application/json and text/event-stream",
	"Mcp-Session-Id":       "the gateway takes the session id from the server's answer to initialize",
	"Mcp-Protocol-Version": "the gateway negotiates the revision; pin one with protocol_version: instead",
	"Mcp-Method":           "the gateway sets it on each request (MCP 2026-07-28)",
	"Mcp-Name":             "the gateway sets it on each request (MCP 2026-07-28)",
	"Last-Event-Id":        "the gateway sets it to resume an event stream",
}

// headerProblem is one header of a server's headers: that can never be
// sent as written.
type headerProblem struct {
	key string // as written
	msg string
}

// headerProblems checks a server's headers: names that are not HTTP
// tokens, values with line breaks or other control characters, headers
// the gateway sets itself, and names written twice in different case (of
// which one would be sent, either one). order gives the keys in file
// order, for the later of two spellings to be the one reported; the
// result follows it. Values are never quoted: they may be secrets.
func headerProblems(h map[string]string, order []string) []headerProblem {
	keys := slices.Collect(maps.Keys(h))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(indexOr(order, a), indexOr(order, b)), cmp.Compare(a, b))
	})
	var out []headerProblem
	first := map[string]string{}
	for _, k := range keys {
		add := func(format string, args ...any) { out = append(out, headerProblem{k, fmt.Sprintf(format, args...)}) }
		canon := textproto.CanonicalMIMEHeaderKey(k)
		switch {
		case k == "":
			add("a header needs a name; name it, or remove the entry")
			continue
		case !headerToken(k):
			add("%q is not a header name: HTTP allows letters, digits and !#$%%&'*+-.^_`|~, no spaces or colons; rename it (such as X-Api-Key)", k)
			continue
		case reservedHeaders[canon] != "":
			add("%s is a header the gateway sets itself: %s; remove it", k, reservedHeaders[canon])
		case strings.HasPrefix(canon, "Mcp-Param-"):
			add("%s is set by the gateway from a tool's parameters (MCP 2026-07-28); remove it", k)
		}
		if prev, dup := first[canon]; dup {
			add("%s is also written %s; HTTP header names ignore case, so only one of them would be sent, either one: keep one", k, prev)
		} else {
			first[canon] = k
		}
		if i := strings.IndexFunc(h[k], badHeaderRune); i >= 0 {
			r := rune(h[k][i])
			what := fmt.Sprintf("the control character %U", r)
			if r == '\n' || r == '\r' {
				what = "a line break"
			}
			add("the value holds %s (at byte %d), which no HTTP header may; remove it (a value read from a file or a variable often ends with a newline)", what, i)
		}
	}
	return out
}

// headers reports the problems of server f's headers.
func (v *validator) headers(f string, h map[string]string) {
	order := slices.SortedFunc(maps.Keys(h), func(a, b string) int {
		pa, pb := v.c.pos[f+".headers."+a], v.c.pos[f+".headers."+b]
		return cmp.Or(cmp.Compare(pa.Line, pb.Line), cmp.Compare(pa.Col, pb.Col))
	})
	for _, p := range headerProblems(h, order) {
		if p.key == "" {
			// Named by its parent, placed at its own line.
			v.errs = append(v.errs, &Error{Pos: v.c.where(f + ".headers."), Field: f + ".headers", Msg: p.msg})
			continue
		}
		v.errorf(f+".headers."+p.key, "%s", p.msg)
	}
}

// headerToken reports whether s is an HTTP token (RFC 9110), as a header
// name must be.
func headerToken(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// badHeaderRune reports whether r may not appear in a header value: a
// control character other than tab.
func badHeaderRune(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }

func indexOr(list []string, s string) int {
	if i := slices.Index(list, s); i >= 0 {
		return i
	}
	return len(list)
}
