package wasm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// Statuses of a call, in every result's _meta under MetaStatus (the same
// key and, where they mean the same, the same values as the script
// executor's); a failed call's text starts with its status too.
const (
	// StatusOK means the call succeeded.
	StatusOK = "ok"
	// StatusError means a command module exited with a non-zero code, or a
	// reactor's function returned a non-zero status.
	StatusError = "error"
	// StatusTrap means the module trapped (unreachable, out-of-bounds
	// access, stack overflow, ...).
	StatusTrap = "trap"
	// StatusTimeout means the call ran past its timeout and was stopped.
	StatusTimeout = "timeout"
	// StatusMemoryLimit means the module failed after its linear memory
	// reached its limit.
	StatusMemoryLimit = "memory_limit"
)

// MetaStatus is the _meta key of a result's status.
const MetaStatus = "skillgate/status"

const (
	// maxLine is the longest stderr line forwarded as it is; longer lines
	// are cut.
	maxLine = 8 << 10
	// maxNotices bounds the progress and log notifications one call sends;
	// later stderr lines only reach the tail kept for errors.
	maxNotices = 1000
	// A failed result shows the first headLines and the last tailLines of
	// stderr (where a crash says what happened, and what came last), at
	// most tailBytes.
	headLines = 10
	tailLines = 20
	tailBytes = 6 << 10
)

// capBuffer keeps the first max bytes written to it and counts the rest.
// The guest never sees a write fail.
type capBuffer struct {
	buf     bytes.Buffer
	max     int
	dropped int64
}

func (b *capBuffer) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if room >= len(p) {
		b.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		b.buf.Write(p[:room])
	}
	b.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (b *capBuffer) Reset() { b.buf.Reset(); b.dropped = 0 }

// stderrLines turns a guest's stderr into progress and log notifications of
// the running call, line by line, and keeps the last lines for an error
// result. A line that is a JSON object with a numeric "progress" is a
// progress report ({"progress": 3, "total": 10, "message": "..."}); a JSON
// object with "level" and "message" is a log message at that level; any
// other line is a log message at level info.
type stderrLines struct {
	call    sdk.Call // nil: lines only go to the tail (and to logf)
	logger  string
	logf    func(line string)
	partial []byte
	notices int
	dropped int
	head    []string
	tail    []string
	skipped int // lines between head and tail
}

func (w *stderrLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			if len(w.partial) >= maxLine {
				w.line(w.partial)
				w.partial = w.partial[:0]
			}
			break
		}
		if len(w.partial) > 0 {
			w.partial = append(w.partial, p[:i]...)
			w.line(w.partial)
			w.partial = w.partial[:0]
		} else {
			w.line(p[:i])
		}
		p = p[i+1:]
	}
	return n, nil
}

// flush handles a last line without a newline.
func (w *stderrLines) flush() {
	if len(w.partial) > 0 {
		w.line(w.partial)
		w.partial = w.partial[:0]
	}
}

// finish handles a last line without a newline and tells the client how
// many lines were not forwarded.
func (w *stderrLines) finish() {
	w.flush()
	if w.call != nil && w.dropped > 0 {
		params, _ := json.Marshal(map[string]any{"level": "warning", "logger": w.logger,
			"data": fmt.Sprintf("%d more stderr lines were not forwarded (limit %d per call)", w.dropped, maxNotices)})
		_ = w.call.Notify(sdk.Notification{Method: "notifications/message", Params: params})
	}
}

func (w *stderrLines) reset(call sdk.Call) {
	w.call = call
	w.partial = w.partial[:0]
	w.notices, w.dropped, w.skipped = 0, 0, 0
	w.head, w.tail = w.head[:0], w.tail[:0]
}

func (w *stderrLines) line(b []byte) {
	b = bytes.TrimRight(b, "\r")
	if len(b) > maxLine {
		b = b[:maxLine]
	}
	s := strings.ToValidUTF8(string(b), string(utf8.RuneError))
	switch {
	case len(w.head) < headLines:
		w.head = append(w.head, s)
	case len(w.tail) == tailLines:
		copy(w.tail, w.tail[1:])
		w.tail[tailLines-1] = s
		w.skipped++
	default:
		w.tail = append(w.tail, s)
	}
	if w.logf != nil {
		w.logf(s)
	}
	if w.call == nil || s == "" {
		return
	}
	if w.notices >= maxNotices {
		w.dropped++
		return
	}
	w.notices++
	if p, ok := parseProgress(b); ok {
		_ = w.call.Progress(p)
		return
	}
	level, data := "info", any(s)
	if l, msg, ok := parseLog(b); ok {
		level, data = l, msg
	}
	params, _ := json.Marshal(map[string]any{"level": level, "logger": w.logger, "data": data})
	_ = w.call.Notify(sdk.Notification{Method: "notifications/message", Params: params})
}

// tailText is the kept start and end of stderr, at most about tailBytes.
func (w *stderrLines) tailText() string {
	head := strings.Join(w.head, "\n")
	if len(head) > tailBytes/2 {
		head = head[:tailBytes/2] + "..."
	}
	tail := strings.Join(w.tail, "\n")
	if len(tail) > tailBytes/2 {
		tail = "..." + tail[len(tail)-tailBytes/2:]
	}
	switch {
	case tail == "":
		return head
	case w.skipped > 0:
		return fmt.Sprintf("%s\n[... %d lines ...]\n%s", head, w.skipped, tail)
	default:
		return head + "\n" + tail
	}
}

func parseProgress(b []byte) (sdk.Progress, bool) {
	if len(b) == 0 || b[0] != '{' {
		return sdk.Progress{}, false
	}
	var p struct {
		Progress *float64 `json:"progress"`
		Total    float64  `json:"total"`
		Message  string   `json:"message"`
	}
	if json.Unmarshal(b, &p) != nil || p.Progress == nil {
		return sdk.Progress{}, false
	}
	return sdk.Progress{Progress: *p.Progress, Total: p.Total, Message: p.Message}, true
}

var logLevels = map[string]bool{
	"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true,
}

func parseLog(b []byte) (level string, msg any, ok bool) {
	if len(b) == 0 || b[0] != '{' {
		return "", nil, false
	}
	var l struct {
		Level   string          `json:"level"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(b, &l) != nil || !logLevels[l.Level] || len(l.Message) == 0 {
		return "", nil, false
	}
	return l.Level, l.Message, true
}

// successResult turns a call's stdout into a CallToolResult: a JSON object
// becomes structuredContent (and its text), anything else text.
func successResult(out *capBuffer) json.RawMessage {
	text := bytes.TrimSpace(out.buf.Bytes())
	var b bytes.Buffer
	b.WriteString(`{"content":[`)
	if len(text) > 0 || out.dropped > 0 {
		b.WriteString(`{"type":"text","text":`)
		s := string(text)
		if out.dropped > 0 {
			s += fmt.Sprintf("\n[output cut: %d more bytes past the %d-byte limit]", out.dropped, out.max)
		}
		writeJSON(&b, strings.ToValidUTF8(s, string(utf8.RuneError)))
		b.WriteString(`}`)
	}
	b.WriteString(`]`)
	if out.dropped == 0 && len(text) > 0 && text[0] == '{' && json.Valid(text) {
		b.WriteString(`,"structuredContent":`)
		b.Write(text)
	}
	b.WriteString(`,"_meta":{`)
	writeJSON(&b, MetaStatus)
	b.WriteString(`:`)
	writeJSON(&b, StatusOK)
	b.WriteString(`}}`)
	return b.Bytes()
}

// errorResult is the isError result of a failed call: what happened, the
// stdout the guest wrote before, and the tail of its stderr.
func errorResult(status, summary string, out *capBuffer, stderr *stderrLines) json.RawMessage {
	var s strings.Builder
	s.WriteString(status)
	s.WriteString(": ")
	s.WriteString(summary)
	if o := bytes.TrimSpace(out.buf.Bytes()); len(o) > 0 {
		s.WriteString("\n--- stdout ---\n")
		s.Write(o)
		if out.dropped > 0 {
			fmt.Fprintf(&s, "\n[output cut: %d more bytes]", out.dropped)
		}
	}
	if t := stderr.tailText(); t != "" {
		s.WriteString("\n--- stderr (last lines) ---\n")
		s.WriteString(t)
	}
	var b bytes.Buffer
	b.WriteString(`{"content":[{"type":"text","text":`)
	writeJSON(&b, strings.ToValidUTF8(s.String(), string(utf8.RuneError)))
	b.WriteString(`}],"isError":true,"_meta":{`)
	writeJSON(&b, MetaStatus)
	b.WriteString(`:`)
	writeJSON(&b, status)
	b.WriteString(`}}`)
	return b.Bytes()
}
