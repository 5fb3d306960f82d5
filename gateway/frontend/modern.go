package frontend

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/skillgate/skillgate/internal/jsonscan"
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
	// One pass over _meta (valid JSON: the body decoded): the version must
	// be the header's, written plainly; clientInfo and clientCapabilities
	// must be there. Anything unusual is left to mcp-go to judge.
	var version, info, caps []byte
	jsonscan.Members(req.Params.Meta, func(key, value []byte, _, _ int) {
		switch string(key) {
		case "io.modelcontextprotocol/protocolVersion":
			version = value
		case "io.modelcontextprotocol/clientInfo":
			info = value
		case "io.modelcontextprotocol/clientCapabilities":
			caps = value
		}
	})
	if len(version) != len(hv)+2 || string(version[1:len(version)-1]) != hv || version[0] != '"' ||
		len(info) == 0 || string(info) == "null" || len(caps) == 0 || string(caps) == "null" {
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
// missing, and serverInfo into the source's own _meta (or a new _meta).
// serverInfo names the server that produced the result for the client,
// which is the gateway: a source's own (a 2026-07-28 upstream's) is
// replaced. One pass over the top level finds them; a result of megabytes
// costs no decode.
func (s *Server) modernResult(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"_meta"`)) && !bytes.Contains(raw, []byte(`"resultType"`)) {
		return insertMembers(raw, []member{{"resultType", []byte(`"complete"`)}, {"_meta", s.modernMeta}})
	}
	hasType := false
	metaStart, metaEnd := -1, -1
	ok := jsonscan.Members(raw, func(key, _ []byte, start, end int) {
		switch string(key) {
		case "resultType":
			hasType = true
		case "_meta":
			metaStart, metaEnd = start, end
		}
	})
	if !ok {
		typed := insertMembers([]byte(`{}`), []member{{"resultType", []byte(`"complete"`)}, {"_meta", s.modernMeta}})
		return mergeResult(raw, typed)
	}
	out := raw
	if metaStart >= 0 {
		if val, ok := s.withServerInfo(raw[metaStart:metaEnd]); ok {
			out = splice(raw, metaStart, metaEnd, val)
		}
	}
	var add []member
	if !hasType {
		add = append(add, member{"resultType", []byte(`"complete"`)})
	}
	if metaStart < 0 {
		add = append(add, member{"_meta", s.modernMeta})
	}
	return insertMembers(out, add)
}

const serverInfoKey = "io.modelcontextprotocol/serverInfo"

// withServerInfo returns the _meta object meta with the gateway's
// serverInfo, in place of any other; ok is false when meta is not an
// object or already holds exactly the gateway's.
func (s *Server) withServerInfo(meta []byte) ([]byte, bool) {
	info := s.modernMeta[len(`{"`+serverInfoKey+`":`) : len(s.modernMeta)-1]
	switch start, end := valueOf(meta, serverInfoKey); {
	case start == -2:
		return nil, false
	case start == -1:
		return insertMembers(meta, []member{{serverInfoKey, info}}), true
	case bytes.Equal(meta[start:end], info):
		return nil, false
	default:
		return splice(meta, start, end, info), true
	}
}

// legacyResult returns a source's result as a client of the 2025-11-25 era
// or older gets it: without what only 2026-07-28 results carry, which an
// upstream of that era sends (resultType, the list cache hints ttlMs and
// cacheScope, and the serverInfo _meta, which would name the upstream). A
// _meta left empty goes too. The other members' values keep their bytes.
func legacyResult(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"resultType"`)) && !bytes.Contains(raw, []byte(`"ttlMs"`)) &&
		!bytes.Contains(raw, []byte(`"cacheScope"`)) && !bytes.Contains(raw, []byte(serverInfoKey)) {
		return raw
	}
	out, ok := editMembers(raw, func(key, value []byte) []byte {
		switch string(key) {
		case "resultType", "ttlMs", "cacheScope":
			return nil
		case "_meta":
			meta, ok := editMembers(value, func(k, v []byte) []byte {
				if string(k) == serverInfoKey {
					return nil
				}
				return v
			})
			if !ok {
				return value
			}
			if string(meta) == "{}" && string(bytes.TrimSpace(value)) != "{}" {
				return nil // it held serverInfo only
			}
			return meta
		}
		return value
	})
	if !ok {
		return raw
	}
	return out
}

// editMembers rebuilds the JSON object obj member by member: edit returns
// the value a member keeps (its own or another), or nil to leave it out.
// Values keep their bytes; keys are written anew. ok is false when obj is
// not an object.
func editMembers(obj []byte, edit func(key, value []byte) []byte) (out []byte, ok bool) {
	out = append(make([]byte, 0, len(obj)), '{')
	n := 0
	ok = jsonscan.Members(obj, func(key, value []byte, _, _ int) {
		v := edit(key, value)
		if v == nil {
			return
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(jsonscan.AppendString(out, string(key)), ':')
		out = append(out, v...)
	})
	return append(out, '}'), ok
}

// withMetaVersion returns the JSON-RPC message body with version as its
// params' _meta protocolVersion, creating params and _meta as needed. Some
// 2026-07-28 clients (the Go SDK, for notifications/cancelled and
// notifications/roots/list_changed) leave it out of notifications and say
// it in the MCP-Protocol-Version header only; mcp-go refuses such a
// notification with 400, and the Go SDK then fails its next call. A body
// whose params or _meta is not an object is returned as it is.
func withMetaVersion(body []byte, version string) []byte {
	v := []member{{"io.modelcontextprotocol/protocolVersion", encode(version)}}
	metaOnly := insertMembers([]byte("{}"), []member{{"_meta", insertMembers([]byte("{}"), v)}})
	pStart, pEnd := valueOf(body, "params")
	if pStart < 0 {
		return insertMembers(body, []member{{"params", metaOnly}})
	}
	params := body[pStart:pEnd]
	if string(params) == "null" {
		return splice(body, pStart, pEnd, metaOnly)
	}
	mStart, mEnd := valueOf(params, "_meta")
	var np []byte
	switch {
	case mStart == -2:
		return body // params is not an object
	case mStart < 0:
		np = insertMembers(params, []member{{"_meta", insertMembers([]byte("{}"), v)}})
	case string(params[mStart:mEnd]) == "null":
		np = splice(params, mStart, mEnd, insertMembers([]byte("{}"), v))
	default:
		meta := params[mStart:mEnd]
		if s, _ := valueOf(meta, "io.modelcontextprotocol/protocolVersion"); s == -2 || s >= 0 {
			return body // not an object, or the version is there
		}
		np = splice(params, mStart, mEnd, insertMembers(meta, v))
	}
	return splice(body, pStart, pEnd, np)
}

// valueOf returns the offsets of member key's value in the JSON object
// obj; -1 when there is no such member, -2 when obj is not an object.
func valueOf(obj []byte, key string) (start, end int) {
	start, end = -1, -1
	if !jsonscan.Members(obj, func(k, _ []byte, s, e int) {
		if string(k) == key {
			start, end = s, e
		}
	}) {
		return -2, -2
	}
	return start, end
}

// splice returns b with b[start:end] replaced by val.
func splice(b []byte, start, end int, val []byte) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(val))
	return append(append(append(out, b[:start]...), val...), b[end:]...)
}
