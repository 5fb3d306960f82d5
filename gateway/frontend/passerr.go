package frontend

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// mcp-go answers every error of a completion provider as an internal
// error (-32603). But a completion for a prompt or template the endpoint
// does not serve is invalid params (-32602), as prompts/get answers for an
// unknown prompt, and a source's JSON-RPC error must reach the client with
// its own code and data. So the completer fails with a passedError: the
// JSON-RPC error object is stashed, and the error's message is a marker
// with its token. On the way out (HTTP and stdio) the answer carrying the
// marker gets the stashed error instead (passedAnswer).

// passedError is an error whose JSON-RPC error object waits in the stash.
type passedError string

func (e passedError) Error() string { return string(e) }

// passError returns the error that makes e the answer, code and data
// included.
func (s *Server) passError(e *sdk.RPCError) error {
	b, _ := json.Marshal(e)
	return passedError(s.passMarker() + s.raw.put(b))
}

// passErrors is passError for err when it is an *sdk.RPCError (a
// source's); other errors stay as they are.
func (s *Server) passErrors(err error) error {
	var re *sdk.RPCError
	if errors.As(err, &re) {
		return s.passError(re)
	}
	return err
}

// passMarker starts the message of a passedError: the stash's prefix,
// random per process, so a source's own error cannot pass for it.
func (s *Server) passMarker() string { return s.raw.prefix + "rpc-error:" }

// passedAnswer returns msg, mcp-go's answer, with the stashed error in
// place of a passedError's, and the HTTP status that error needs in the
// request's era; else msg and false.
func (s *Server) passedAnswer(msg []byte, modern bool) (out []byte, status int, ok bool) {
	id, tok, found := markedError(msg, s.passMarker())
	if !found {
		return msg, 0, false
	}
	raw, found := s.raw.take(tok)
	if !found {
		return msg, 0, false
	}
	status = http.StatusOK
	if modern {
		var e struct {
			Code int64 `json:"code"`
		}
		_ = json.Unmarshal(raw, &e)
		status = modernErrorStatus(e.Code)
	}
	return rpcEnvelope(id, `,"error":`, raw), status, true
}

// markedError reads msg as mcp-go's answer with an error whose message
// starts with marker, and returns the answer's id and the rest of the
// message; false when msg is no such answer.
func markedError(msg []byte, marker string) (id json.RawMessage, rest string, ok bool) {
	if !bytes.Contains(msg, []byte(marker)) {
		return nil, "", false
	}
	var env struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &env) != nil || env.Error == nil || len(env.ID) == 0 {
		return nil, "", false
	}
	rest, ok = strings.CutPrefix(env.Error.Message, marker)
	if !ok {
		return nil, "", false
	}
	return env.ID, rest, true
}

// modernErrorStatus is the HTTP status 2026-07-28 gives a JSON-RPC error
// with code, as mcp-go answers it.
func modernErrorStatus(code int64) int {
	switch code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR, mcp.HEADER_MISMATCH,
		mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION:
		return http.StatusBadRequest
	}
	return http.StatusOK
}
