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
// missing, and serverInfo into the source's own _meta (or a new _meta) when
// that lacks it. One pass over the top level finds them; a result of
// megabytes costs no decode.
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
		val := raw[metaStart:metaEnd]
		has := false
		isObject := jsonscan.Members(val, func(key, _ []byte, _, _ int) {
			has = has || string(key) == serverInfoKey
		})
		if isObject && !has {
			info := s.modernMeta[len(`{"`+serverInfoKey+`":`) : len(s.modernMeta)-1]
			val = insertMembers(val, []member{{serverInfoKey, info}})
			out = append(append(append(make([]byte, 0, len(raw)+len(val)), raw[:metaStart]...), val...), raw[metaEnd:]...)
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
