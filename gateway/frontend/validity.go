package frontend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/internal/jsonscan"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Messages MCP does not allow, which the front end refuses itself, the
// same way over HTTP and stdio (mcp-go would take some for what they are
// not: a request with a null id for a notification, a message with an id
// and nothing else for a response, a notification with an id for a
// request of an unknown method):
//
//   - JSON that is not an object: Invalid Request (not a parse error: it
//     parsed);
//   - a request with a null id, a notification with an id, a message with
//     an id and neither method nor result nor error: Invalid Request;
//   - tools/call arguments that are not an object: invalid params (a
//     source would be handed them as they are);
//   - a list cursor the gateway did not issue: invalid params.
//
// Anything else mcp-go judges: what does not parse (-32700), a "jsonrpc"
// other than "2.0" (-32600), an unknown method (-32601), params of the
// wrong type (-32602).

// nonObject names the kind of JSON value body is when it is valid JSON but
// neither an object nor an array (a batch, refused on its own), and
// returns "" otherwise.
func nonObject(body []byte) string {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] == '{' || b[0] == '[' || !json.Valid(b) {
		return ""
	}
	return jsonscan.Kind(b)
}

// notObjectError is the error answering a message that is valid JSON of
// kind kind but not an object.
func notObjectError(kind string) *sdk.RPCError {
	return &sdk.RPCError{Code: sdk.CodeInvalidRequest,
		Message: "Invalid Request: a JSON-RPC message is a JSON object; this one is " + kind}
}

// messageError returns the error answering body, read as req, when MCP
// does not allow it as a message; nil when it does, or when mcp-go is the
// one to judge it (a "jsonrpc" other than "2.0").
func messageError(body []byte, req *request) *sdk.RPCError {
	if !req.valid() {
		return nil
	}
	switch {
	case string(req.ID) == "null" && req.Method != "":
		return &sdk.RPCError{Code: sdk.CodeInvalidRequest,
			Message: "Invalid Request: the id of a request must be a string or an integer, not null; a notification has no id member"}
	case len(req.ID) > 0 && strings.HasPrefix(req.Method, "notifications/"):
		return &sdk.RPCError{Code: sdk.CodeInvalidRequest,
			Message: fmt.Sprintf("Invalid Request: %s is a notification, which has no id; send it without one", req.Method)}
	case len(req.ID) > 0 && req.Method == "" && !hasMember(body, "result") && !hasMember(body, "error"):
		return &sdk.RPCError{Code: sdk.CodeInvalidRequest,
			Message: "Invalid Request: a message with an id needs a method (a request), or a result or an error (a response)"}
	}
	return nil
}

// argumentsError returns the error answering a tools/call whose arguments
// are not an object, or nil.
func argumentsError(req *request) *sdk.RPCError {
	if req.Method != string(mcp.MethodToolsCall) || !hasValue(req.Params.Arguments) || req.Params.Arguments[0] == '{' {
		return nil
	}
	return &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf(
		"Invalid params: tools/call arguments must be an object (name: value), not %s; send {} for none", jsonscan.Kind(req.Params.Arguments))}
}

// cursorError returns the error answering a list request whose cursor the
// gateway did not issue, or nil: it answers every list whole and issues
// none, so an empty cursor is the start and any other is not one of its.
func cursorError(req *request) *sdk.RPCError {
	if _, isList := listKeys[req.Method]; !isList || req.Params.Cursor == nil || *req.Params.Cursor == "" {
		return nil
	}
	return &sdk.RPCError{Code: sdk.CodeInvalidParams,
		Message: "invalid cursor: the gateway answers every list whole and issues no cursors; send the request without one"}
}

// hasMember reports whether the JSON object body has a member key.
func hasMember(body []byte, key string) bool {
	found := false
	jsonscan.Members(body, func(k, _ []byte, _, _ int) { found = found || string(k) == key })
	return found
}

// refuse answers a request over HTTP with the JSON-RPC error e, under id
// (null when it has none), with HTTP status.
func refuse(w http.ResponseWriter, id json.RawMessage, e *sdk.RPCError, status int) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(answer(id, nil, e), '\n'))
}

// paramsStatus is the HTTP status of an invalid params error: 400 in
// 2026-07-28, which maps JSON-RPC errors to statuses; 200 before.
func paramsStatus(modern bool) int {
	if modern {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// missingSessionText says what a request of the 2025-11-25 era or older
// without an Mcp-Session-Id lacks and what to do.
const missingSessionText = "Bad Request: missing Mcp-Session-Id header: send initialize first (without one), " +
	"then the Mcp-Session-Id from its answer with every later request of the session " +
	"(2026-07-28 requests, which name their version in MCP-Protocol-Version, need none)"

// missingSession answers a request of the 2025-11-25 era or older without
// an Mcp-Session-Id, which every request but initialize needs: 400, as
// the transport asks (404 would tell the client its session ended). A
// POST gets a JSON-RPC error under its id (jsonRPC), a GET or a DELETE
// plain text, which for a GET also says that this is not the legacy
// HTTP+SSE transport (whose clients GET the endpoint first).
func missingSession(w http.ResponseWriter, method string, jsonRPC bool, id json.RawMessage) {
	if jsonRPC {
		refuse(w, id, &sdk.RPCError{Code: sdk.CodeInvalidRequest, Message: missingSessionText}, http.StatusBadRequest)
		return
	}
	msg := missingSessionText
	if method == http.MethodGet {
		msg += "; a GET opens the event stream of a session. This endpoint speaks MCP streamable HTTP, not the legacy " +
			"HTTP+SSE transport: connect with a streamable HTTP client (MCP Inspector: --transport http)"
	}
	http.Error(w, msg, http.StatusBadRequest)
}
