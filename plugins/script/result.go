package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/jsonscan"
)

// Statuses reported in a result's _meta["skillgate/status"].
const (
	statusOK       = "ok"
	statusError    = "error"    // the tool failed (non-zero exit, error answer, bad output)
	statusTimeout  = "timeout"  // still running at the call's ceiling
	statusStalled  = "stalled"  // printed nothing for stall_timeout
	statusCanceled = "canceled" // the client cancelled
	statusCrashed  = "crashed"  // a persistent process died during the call
)

// StatusKey is the _meta key of every result's status: ok, error, timeout,
// stalled, canceled or crashed.
const StatusKey = "skillgate/status"

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callResult struct {
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              map[string]any  `json:"_meta,omitempty"`
}

func (r callResult) encode() json.RawMessage {
	b, err := json.Marshal(r)
	if err != nil {
		panic("script: marshal result: " + err.Error())
	}
	return b
}

func errorResult(status, msg string) json.RawMessage {
	return callResult{
		Content: []content{{Type: "text", Text: msg}},
		IsError: true,
		Meta:    map[string]any{StatusKey: status},
	}.encode()
}

// withStatus adds the status to a result object the script produced,
// keeping everything else as it is (compacted: the script's whitespace
// would be passed on otherwise). raw must be valid JSON.
func withStatus(raw json.RawMessage, status string) json.RawMessage {
	n, hasContent, hasMeta := 0, false, false
	isObject := jsonscan.Members(raw, func(key, _ []byte, _, _ int) {
		n++
		switch string(key) {
		case "content":
			hasContent = true
		case "_meta":
			hasMeta = true
		}
	})
	if !isObject {
		return errorResult(statusError, "the tool answered with a result that is not a JSON object: "+clip(string(raw), 200))
	}
	if !hasMeta {
		// The common case: the status is appended to the object as it is.
		b := bytes.NewBuffer(make([]byte, 0, len(raw)+64))
		_ = json.Compact(b, raw)
		out := b.Bytes()
		out = out[:len(out)-1] // the closing brace
		if n > 0 {
			out = append(out, ',')
		}
		if !hasContent {
			out = append(out, `"content":[],`...)
		}
		out = append(out, `"_meta":{"`+StatusKey+`":`...)
		out = strconv.AppendQuote(out, status)
		return append(out, "}}"...)
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	if !hasContent {
		m["content"] = json.RawMessage("[]")
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(m["_meta"], &meta)
	if meta == nil { // null or not an object
		meta = map[string]json.RawMessage{}
	}
	meta[StatusKey], _ = json.Marshal(status)
	m["_meta"], _ = json.Marshal(meta)
	out, _ := json.Marshal(m)
	return out
}

// hint explains a status that ended a call.
func hint(status string, timeout, stall time.Duration) string {
	switch status {
	case statusTimeout:
		return fmt.Sprintf("the tool was still running (and printing) at its %v ceiling and was killed; make it faster, or raise timeout in tool.yaml", timeout)
	case statusStalled:
		return fmt.Sprintf("the tool printed nothing for %v and was killed as stalled; if it is slow but working, print progress (a stderr line, or notifications/progress) or raise stall_timeout in tool.yaml", stall)
	case statusCanceled:
		return "the call was cancelled by the client and the tool was stopped"
	}
	return ""
}

// outputNote describes what a killed or failed process printed.
func outputNote(stdout []byte, stdoutDropped int64, stderr []byte) string {
	var b bytes.Buffer
	if s := bytes.TrimSpace(stdout); len(s) > 0 {
		fmt.Fprintf(&b, "\n\nstdout before it ended:\n%s", validUTF8(s))
		if stdoutDropped > 0 {
			fmt.Fprintf(&b, "\n[%d more bytes of stdout dropped past the output cap]", stdoutDropped)
		}
	}
	if tail := tailLines(stderr, 40, 8<<10); len(tail) > 0 {
		fmt.Fprintf(&b, "\n\nstderr (last lines):\n%s", tail)
	}
	return b.String()
}

// tailLines returns at most n lines and max bytes from the end of b.
func tailLines(b []byte, n, maxBytes int) string {
	b = bytes.TrimRight(b, "\n\r\t ")
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	for i, cnt := len(b)-1, 0; i >= 0; i-- {
		if b[i] == '\n' {
			if cnt++; cnt == n {
				b = b[i+1:]
				break
			}
		}
	}
	return validUTF8(b)
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func sortStrings(s []string) { sort.Strings(s) }

// TruncatedKey is the _meta key of a result whose output went past the
// kept bound and was cut: {"dropped": bytes read and dropped, "cap": the
// bound}. The text then ends with a line saying the same.
const TruncatedKey = "skillgate/truncated"
