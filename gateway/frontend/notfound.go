package frontend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/gateway/disclosure"
)

// A client of a profile must not tell a resource outside its profile from
// one that does not exist. mcp-go answers a read of a URI it has no
// handler for itself (-32002 "resource not found" up to 2025-11-25,
// invalid params and HTTP 400 in 2026-07-28); a handler's error it can
// only answer as an internal error. So the resource handler fails with
// noResource, whose message carries a marker, and the answer is replaced
// on its way out (HTTP and stdio) by the one mcp-go gives for a URI it has
// no handler for. The catch-all template sends every URI to that handler,
// so a URI that exists nowhere gets the same answer the same way.

// noResourceError is the resource handler's error for a URI the request's
// endpoint does not serve.
type noResourceError struct{ marker, uri string }

func (e noResourceError) Error() string { return e.marker + e.uri }

// noResource is the resource handler's error for uri.
func (s *Server) noResource(uri string) error {
	return noResourceError{marker: s.noResourceMarker(), uri: uri}
}

// noResourceMarker starts the message of a noResource error: the stash's
// prefix, random per process, so a source's own error cannot pass for it.
func (s *Server) noResourceMarker() string { return s.raw.prefix + "no-resource:" }

// resourceNotFound is mcp-go's error for a read of uri it has no handler
// for: its code for the era, and its message.
func resourceNotFound(uri string, modern bool) []byte {
	code := mcp.RESOURCE_NOT_FOUND
	if modern {
		code = mcp.INVALID_PARAMS
	}
	msg := fmt.Errorf("handler not found for resource URI '%s': %w", uri, server.ErrResourceNotFound).Error()
	b, _ := json.Marshal(mcp.NewJSONRPCErrorDetails(code, msg, nil))
	return b
}

// noResourceAnswer returns the answer mcp-go gives for a URI it has no
// handler for in place of msg, when msg answers a resources/read with a
// noResource error; else msg and false. status is the HTTP status of that
// answer in the request's era.
func (s *Server) noResourceAnswer(msg []byte, method string, modern bool) (out []byte, status int, ok bool) {
	if method != string(mcp.MethodResourcesRead) {
		return msg, 0, false
	}
	id, uri, found := markedError(msg, s.noResourceMarker())
	if !found {
		return msg, 0, false
	}
	status = http.StatusOK
	if modern {
		status = http.StatusBadRequest
	}
	return rpcEnvelope(id, `,"error":`, resourceNotFound(uri, modern)), status, true
}

// mcp-go refuses a tools/call of a tool it has not registered, or that the
// tool filter drops (a tool outside the request's profile), with
// "tool 'NAME' not found: tool not found". unknownToolAnswer puts in its
// place what Disclosure.ToolRefusal says about NAME for the request's
// endpoint: the closest names, the profile that does not serve it, or the
// state of its server. Code and HTTP status stay mcp-go's.
func (s *Server) unknownToolAnswer(msg []byte, req disclosure.Request) ([]byte, bool) {
	suffix := "' not found: " + server.ErrToolNotFound.Error()
	if !bytes.Contains(msg, []byte(suffix)) {
		return msg, false
	}
	var env struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &env) != nil || env.Error == nil || env.Error.Code != mcp.INVALID_PARAMS || len(env.ID) == 0 {
		return msg, false
	}
	name, ok := strings.CutPrefix(env.Error.Message, "tool '")
	if !ok {
		return msg, false
	}
	if name, ok = strings.CutSuffix(name, suffix); !ok {
		return msg, false
	}
	why := s.Disclosure().ToolRefusal(s.snap.Load(), req, name)
	if why == "" {
		return msg, false // served now (a reload): mcp-go's word stands
	}
	env.Error.Message = why
	e, err := json.Marshal(env.Error)
	if err != nil {
		return msg, false
	}
	return rpcEnvelope(env.ID, `,"error":`, e), true
}
