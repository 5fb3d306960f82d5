package pipelines

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// toolResult is the part of an MCP CallToolResult a pipeline reads.
type toolResult struct {
	Content           []contentItem   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Meta              struct {
		Truncated *truncation `json:"skillgate/truncated"`
	} `json:"_meta"`
}

// truncation is a result's _meta["skillgate/truncated"]: the executor cut
// the tool's output, dropping Dropped bytes past Cap.
type truncation struct {
	Dropped int64 `json:"dropped"`
	Cap     int64 `json:"cap"`
}

type contentItem struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// errToolFailed is wrapped by the error of a call whose result had isError.
var errToolFailed = errors.New("the tool reported an error")

// stepOutput reads a CallToolResult into what expressions see as the
// step's outputs: structuredContent when present, else the text content
// parsed as JSON, else the text itself; non-text content, when that is
// all there is, as the list of content items. Text the executor flagged
// as cut (_meta["skillgate/truncated"]) stays text, ending with the line
// that says so (see cutNote), even when what was kept parses.
func stepOutput(raw json.RawMessage) (any, error) {
	var r toolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, errors.New("the tool's result is not a CallToolResult: " + err.Error())
	}
	text := resultText(r.Content)
	if cut := r.Meta.Truncated; cut != nil && cut.Dropped > 0 && !r.IsError && len(r.StructuredContent) == 0 {
		if !cutMarker.MatchString(text) {
			text = strings.TrimRight(text, "\n") + cutLine(cut.Dropped, cut.Cap)
		}
		return text, nil
	}
	if r.IsError {
		if text == "" {
			text = "no details given"
		}
		return nil, &toolError{msg: text}
	}
	if len(r.StructuredContent) > 0 && !bytes.Equal(r.StructuredContent, []byte("null")) {
		var v any
		if err := json.Unmarshal(r.StructuredContent, &v); err != nil {
			return nil, errors.New("the tool's structuredContent is not JSON: " + err.Error())
		}
		return v, nil
	}
	hasText := false
	for _, c := range r.Content {
		hasText = hasText || c.Type == "text"
	}
	if !hasText && len(r.Content) > 0 {
		var all struct {
			Content []any `json:"content"`
		}
		_ = json.Unmarshal(raw, &all)
		return all.Content, nil
	}
	if t := strings.TrimSpace(text); t != "" && strings.ContainsRune("{[\"-0123456789tfn", rune(t[0])) {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			return v, nil
		}
	}
	return text, nil
}

func resultText(cs []contentItem) string {
	var parts []string
	for _, c := range cs {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolError is a result with isError, its text the message.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }
func (e *toolError) Unwrap() error { return errToolFailed }

// okResult is a CallToolResult carrying v as structuredContent and as
// JSON text.
func okResult(v any, max int) (json.RawMessage, error) {
	b, err := marshalBounded(v, max)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString(`{"content":[{"type":"text","text":`)
	t, _ := marshalText(string(b), "")
	out.Write(t)
	out.WriteString(`}],"structuredContent":`)
	out.Write(b)
	out.WriteString(`}`)
	return out.Bytes(), nil
}

// errorResult is a CallToolResult with isError and msg as its text.
func errorResult(msg string) json.RawMessage {
	t, _ := marshalText(msg, "")
	return json.RawMessage(`{"content":[{"type":"text","text":` + string(t) + `}],"isError":true}`)
}
