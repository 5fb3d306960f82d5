package script

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/plugins/script/internal/proc"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// maxLogLines bounds the stderr lines of one call forwarded to the client;
// the rest are counted and dropped.
const maxLogLines = 1000

// maxLogLine bounds one forwarded line.
const maxLogLine = 4 << 10

// logForwarder turns a tool's stderr lines into progress reports (a line
// that is a JSON object with a "progress" number) and log notifications.
type logForwarder struct {
	tool string
	call sdk.Call

	mu      sync.Mutex
	n       int
	dropped int
}

type progressLine struct {
	Progress *float64 `json:"progress"`
	Total    float64  `json:"total"`
	Message  string   `json:"message"`
}

func (f *logForwarder) line(line []byte, cut bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n >= maxLogLines {
		f.dropped++
		return
	}
	f.n++
	if len(line) > 0 && line[0] == '{' && !cut {
		var p progressLine
		if json.Unmarshal(line, &p) == nil && p.Progress != nil {
			_ = f.call.Progress(sdk.Progress{Progress: *p.Progress, Total: p.Total, Message: p.Message})
			return
		}
	}
	text := validUTF8(line)
	if cut {
		text += " [line cut]"
	}
	f.notify("info", text)
}

func (f *logForwarder) notify(level, text string) {
	params, _ := json.Marshal(map[string]any{"level": level, "logger": f.tool, "data": text})
	_ = f.call.Notify(sdk.Notification{Method: "notifications/message", Params: params})
}

// finish reports how many lines were dropped.
func (f *logForwarder) finish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropped > 0 {
		f.notify("warning", fmt.Sprintf("%d more stderr lines were not forwarded (limit %d per call)", f.dropped, maxLogLines))
	}
}

// callSimple runs the simple protocol: arguments as JSON on stdin, the
// result on stdout, stderr lines streamed as logs and progress.
func (t *tool) callSimple(ctx context.Context, args json.RawMessage, deps *installed, call sdk.Call) (json.RawMessage, error) {
	argv, err := t.argv(args, deps)
	if err != nil {
		return errorResult(statusError, err.Error()), nil
	}
	fwd := &logForwarder{tool: t.spec.Tool.Name, call: call}
	cfg := t.procConfig(argv, deps)
	keep := t.cap
	if shaping(ctx) {
		keep = max(keep, MaxShapedOutput)
	}
	cfg.Stdout = proc.Output{Keep: keep}
	cfg.Stderr = proc.Output{Keep: t.cap, Tail: true, OnLine: fwd.line, MaxLine: maxLogLine}
	p, err := proc.Start(cfg)
	if err != nil {
		return errorResult(statusError, fmt.Sprintf("could not start the tool: %v", err)), nil
	}
	go func() {
		// A tool that never reads stdin must not block anything.
		_, _ = p.Stdin().Write(append(args, '\n'))
		_ = p.Stdin().Close()
	}()
	status := t.supervise(ctx, p, nil)
	if status != statusOK {
		p.Stop()
	}
	r := p.Result()
	fwd.finish()
	if status != statusOK {
		msg := hint(status, t.timeout, t.stall) + outputNote(r.Stdout, r.StdoutDropped, r.Stderr)
		return errorResult(status, msg), nil
	}
	if r.Err != nil {
		return errorResult(statusError, fmt.Sprintf("waiting for the tool: %v", r.Err)), nil
	}
	if r.ExitCode != 0 {
		what := fmt.Sprintf("exit status %d", r.ExitCode)
		if r.Signal != 0 {
			what = "killed by signal " + r.Signal.String()
		}
		msg := fmt.Sprintf("the tool failed (%s)", what) + outputNote(r.Stdout, r.StdoutDropped, r.Stderr)
		return callResult{
			Content: []content{{Type: "text", Text: msg}},
			IsError: true,
			Meta:    map[string]any{StatusKey: statusError, "skillgate/exitCode": r.ExitCode},
		}.encode(), nil
	}
	return simpleResult(r.Stdout, r.StdoutDropped, keep), nil
}

// simpleResult turns a successful tool's stdout into a CallToolResult: a
// JSON object becomes structuredContent (and its text), anything else text.
func simpleResult(stdout []byte, dropped int64, cap int) json.RawMessage {
	out := bytes.TrimSpace(stdout)
	if dropped == 0 && len(out) > 0 && out[0] == '{' && json.Valid(out) {
		var compact bytes.Buffer
		if json.Compact(&compact, out) == nil {
			return callResult{
				Content:           []content{{Type: "text", Text: compact.String()}},
				StructuredContent: compact.Bytes(),
				Meta:              map[string]any{StatusKey: statusOK},
			}.encode()
		}
	}
	text := validUTF8(out)
	meta := map[string]any{StatusKey: statusOK}
	if dropped > 0 {
		text = strings.TrimRight(validUTF8(stdout), "\n") +
			fmt.Sprintf("\n[output truncated: %d more bytes were dropped past the %d-byte output cap]", dropped, cap)
		meta[TruncatedKey] = truncation{Dropped: dropped, Cap: cap}
	}
	return callResult{Content: []content{{Type: "text", Text: text}}, Meta: meta}.encode()
}

// truncation is the value of _meta[TruncatedKey].
type truncation struct {
	Dropped int64 `json:"dropped"`
	Cap     int   `json:"cap"`
}
