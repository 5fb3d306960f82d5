package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Helpers for the JSON an executor reads and answers most often: the
// params of a tools/call, and the results of tools/call, resources/read and
// prompts/get in their common, text-only forms. They build and read raw
// JSON, as the contract passes it; anything they do not cover (images,
// blobs, several messages, _meta) an executor writes as JSON itself.

// ToolCall is the params of a tools/call request, as ParseToolCall reads
// them.
type ToolCall struct {
	// Name is the tool's name, as the source declared it.
	Name string
	// Arguments is the arguments object as the client sent it; nil when
	// it sent none.
	Arguments json.RawMessage
}

// ParseToolCall reads the params of a tools/call request (req.Params).
// Params that are not an object with a non-empty string "name", or whose
// "arguments" is neither an object nor null, are a malformed request: the
// error is then an *RPCError with CodeInvalidParams, which Call can return
// as it is. Other members of the params (such as _meta) are ignored.
func ParseToolCall(req CallRequest) (ToolCall, error) {
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return ToolCall{}, &RPCError{Code: CodeInvalidParams, Message: fmt.Sprintf("invalid tools/call params: %v", err)}
	}
	if p.Name == nil || *p.Name == "" {
		return ToolCall{}, &RPCError{Code: CodeInvalidParams, Message: `invalid tools/call params: "name" is missing or empty`}
	}
	args := bytes.TrimSpace(p.Arguments)
	switch {
	case len(args) == 0 || string(args) == "null":
		args = nil
	case args[0] != '{':
		return ToolCall{}, &RPCError{Code: CodeInvalidParams,
			Message: fmt.Sprintf("invalid tools/call params: the arguments of tool %q must be a JSON object, not %s", *p.Name, clipJSON(args))}
	}
	return ToolCall{Name: *p.Name, Arguments: args}, nil
}

// DecodeArguments decodes the call's arguments into v, a pointer, strictly:
// a member v has no field for, a value of another type than the field's,
// or anything after the object is an error. Absent or null arguments leave
// v as it is, so set defaults in v first. The error names the tool and
// says what is wrong, for the model to read: bad arguments are a tool
// error in MCP, so answer it with ErrorResult, not as an error of Call.
func (c ToolCall) DecodeArguments(v any) error {
	if c.Arguments == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(c.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments of tool %q: %s", c.Name, argumentsProblem(err))
	}
	if dec.More() {
		return fmt.Errorf("arguments of tool %q: unexpected data after the arguments object", c.Name)
	}
	return nil
}

// argumentsProblem words a decoding error without Go's type names, which
// mean nothing to the model that reads it.
func argumentsProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Sprintf("%q must be %s, not %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON values a Go type decodes from, with an article.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another type"
}

// UnknownTool is the error for a tools/call of a tool the source does not
// offer: an *RPCError with CodeInvalidParams (a protocol error in MCP, not
// a tool error), whose message names the tool.
func UnknownTool(name string) *RPCError {
	return &RPCError{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// textContent is an MCP TextContent block.
type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// toolResult is an MCP CallToolResult.
type toolResult struct {
	Content           []textContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// TextResult returns a CallToolResult (tools/call) whose content is text,
// one text block.
func TextResult(text string) json.RawMessage {
	return mustMarshal(toolResult{Content: []textContent{{Type: "text", Text: text}}})
}

// ErrorResult returns a CallToolResult with "isError": true and text as
// its content: the tool ran and failed, or refused its arguments, and the
// model reads why and may try again. A call that cannot be made at all
// (an unknown tool, malformed params) is an *RPCError instead.
func ErrorResult(text string) json.RawMessage {
	return mustMarshal(toolResult{Content: []textContent{{Type: "text", Text: text}}, IsError: true})
}

// StructuredResult returns a CallToolResult whose structuredContent is v
// encoded as JSON, with the same JSON as its text content for clients
// that do not read structured content, as MCP asks of a tool with an
// outputSchema. v must encode to a JSON object; the result should match
// the tool's outputSchema, which neither the SDK nor the gateway checks.
func StructuredResult(v any) (json.RawMessage, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, fmt.Errorf("structured result: %w", err)
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("structured result: structuredContent must be a JSON object, not %s", clipJSON(b))
	}
	return mustMarshal(toolResult{Content: []textContent{{Type: "text", Text: string(b)}}, StructuredContent: b}), nil
}

// ResourceResult returns a ReadResourceResult (resources/read) with one
// text resource: uri as read, its MIME type (left out when empty) and its
// text.
func ResourceResult(uri, mimeType, text string) json.RawMessage {
	type contents struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text"`
	}
	return mustMarshal(struct {
		Contents []contents `json:"contents"`
	}{[]contents{{URI: uri, MIMEType: mimeType, Text: text}}})
}

// PromptResult returns a GetPromptResult (prompts/get) with one user
// message whose content is text; description is left out when empty.
func PromptResult(description, text string) json.RawMessage {
	type message struct {
		Role    string      `json:"role"`
		Content textContent `json:"content"`
	}
	return mustMarshal(struct {
		Description string    `json:"description,omitempty"`
		Messages    []message `json:"messages"`
	}{description, []message{{Role: "user", Content: textContent{Type: "text", Text: text}}}})
}

// marshal encodes v as compact JSON, leaving <, > and & as they are (text
// for people and models, not for HTML).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// mustMarshal encodes values that always encode: strings and the result
// types above.
func mustMarshal(v any) json.RawMessage {
	b, err := marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sdk: encode %T: %v", v, err))
	}
	return b
}

// clipJSON shortens a JSON value for an error message.
func clipJSON(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
