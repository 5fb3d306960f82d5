package frontend

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// The stateless 2026-07-28 revision has no session, so nothing mcp-go holds
// for a client can be owed to it: a well-formed tools/list or tools/call is
// answered past mcp-go, with the members mcp-go would add (resultType, the
// serverInfo _meta, the list's cache hints). Anything unusual — a header
// that does not match the body, a version mcp-go would refuse, a tool with
// x-mcp-header bindings, a task — goes to mcp-go, which validates it and
// answers with the error the revision prescribes.

// modernPlain reports whether a 2026-07-28 request is one the front end
// may answer itself.
func modernPlain(r *http.Request, req *request) bool {
	if len(req.ID) == 0 || len(req.Params.Task) > 0 || r.Header.Get(mcp.HeaderLastEventID) != "" {
		return false
	}
	hv := r.Header.Get(mcp.HeaderProtocolVersion)
	if hv != mcp.ProtocolVersion20260728 || r.Header.Get(mcp.HeaderMethod) != req.Method {
		return false
	}
	var meta struct {
		Version string          `json:"io.modelcontextprotocol/protocolVersion"`
		Info    json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
		Caps    json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if json.Unmarshal(req.Params.Meta, &meta) != nil || meta.Version != hv || len(meta.Info) == 0 || len(meta.Caps) == 0 {
		return false
	}
	if req.Method == string(mcp.MethodToolsCall) {
		name, ok := mcp.DecodeHeaderValue(r.Header.Get(mcp.HeaderName))
		return ok && name != "" && name == req.Params.Name
	}
	return true
}

// serverInfoMeta is the _meta mcp-go adds to every 2026-07-28 result.
func (s *Server) serverInfoMeta() []byte {
	b, _ := json.Marshal(map[string]any{"io.modelcontextprotocol/serverInfo": map[string]string{"name": s.opts.Name, "version": s.opts.Version}})
	return b
}

// modernResult adds to a source's result what mcp-go adds for a 2026-07-28
// client: resultType and the serverInfo _meta.
//
// The source's members keep their bytes and order: resultType is added when
// missing, and serverInfo into the source's own _meta (or a new _meta) when
// that lacks it. One pass over the top level finds them; a result of
// megabytes costs no decode.
func (s *Server) modernResult(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"_meta"`)) && !bytes.Contains(raw, []byte(`"resultType"`)) {
		return insertMembers(raw, []member{{"resultType", []byte(`"complete"`)}, {"_meta", s.modernMeta}})
	}
	members, ok := topMembers(raw)
	if !ok {
		typed := insertMembers([]byte(`{}`), []member{{"resultType", []byte(`"complete"`)}, {"_meta", s.modernMeta}})
		return mergeResult(raw, typed)
	}
	hasType := false
	meta := -1
	for i, m := range members {
		switch {
		case keyIs(raw, m, "resultType"):
			hasType = true
		case keyIs(raw, m, "_meta"):
			meta = i
		}
	}
	out := raw
	if meta >= 0 {
		m := members[meta]
		val := raw[m.valStart:m.valEnd]
		inner, ok := topMembers(val)
		has := false
		for _, im := range inner {
			has = has || keyIs(val, im, serverInfoKey)
		}
		if ok && !has {
			info := s.modernMeta[len(`{"`+serverInfoKey+`":`) : len(s.modernMeta)-1]
			val = insertMembers(val, []member{{serverInfoKey, info}})
			out = append(append(append(make([]byte, 0, len(raw)+len(val)), raw[:m.valStart]...), val...), raw[m.valEnd:]...)
		}
	}
	var add []member
	if !hasType {
		add = append(add, member{"resultType", []byte(`"complete"`)})
	}
	if meta < 0 {
		add = append(add, member{"_meta", s.modernMeta})
	}
	return insertMembers(out, add)
}

const serverInfoKey = "io.modelcontextprotocol/serverInfo"

// member spans of a JSON object's top level, found by one pass over its
// bytes: strings (with escapes) and nesting are tracked, nothing decoded.
type span struct{ keyStart, keyEnd, valStart, valEnd int }

// topMembers returns the top-level members of the JSON object obj, or
// false when obj is not an object it can walk. obj must be valid JSON.
func topMembers(obj []byte) ([]span, bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, false
	}
	var out []span
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) {
			return nil, false
		}
		if obj[i] == '}' {
			return out, true
		}
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
		if i >= len(obj) || obj[i] != '"' {
			return nil, false
		}
		var s span
		s.keyStart = i
		i = skipString(obj, i)
		s.keyEnd = i
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != ':' {
			return nil, false
		}
		i = skipSpace(obj, i+1)
		s.valStart = i
		i = skipValue(obj, i)
		if i < 0 {
			return nil, false
		}
		s.valEnd = i
		out = append(out, s)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\t' && b[i] != '\r' {
			i++
		}
		return i
	}
}

// keyIs reports whether the key of s (quotes included) is name, written
// without escapes.
func keyIs(obj []byte, s span, name string) bool {
	k := obj[s.keyStart:s.keyEnd]
	return len(k) == len(name)+2 && string(k[1:len(k)-1]) == name
}
