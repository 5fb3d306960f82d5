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
func (s *Server) modernResult(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"_meta"`)) && !bytes.Contains(raw, []byte(`"resultType"`)) {
		return insertMembers(raw, []member{{"resultType", []byte(`"complete"`)}, {"_meta", s.modernMeta}})
	}
	typed := insertMembers([]byte(`{}`), []member{{"resultType", []byte(`"complete"`)}, {"_meta", s.modernMeta}})
	return mergeResult(raw, typed)
}
