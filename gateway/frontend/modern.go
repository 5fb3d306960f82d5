package frontend

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/disclosure"
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

// serveModernList answers a 2026-07-28 tools/list without a cursor.
func (s *Server) serveModernList(w http.ResponseWriter, req request, dreq disclosure.Request) {
	list := s.listJSON(s.snap.Load(), req.Method, dreq)
	key := listKeys[req.Method]
	out := make([]byte, 0, len(list)+len(req.ID)+200)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, req.ID...)
	out = append(out, `,"result":{"`...)
	out = append(out, key...)
	out = append(out, `":`...)
	out = append(out, list...)
	out = append(out, `,"_meta":`...)
	out = append(out, s.modernMeta...)
	out = append(out, `,"cacheScope":"private","resultType":"complete","ttlMs":0}}`+"\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
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
