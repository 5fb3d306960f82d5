package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// LevelTrace is the slog level plugin records logged at "trace" get.
const LevelTrace = slog.LevelDebug - 4

// maxLine caps one logged line; longer output is logged in pieces.
const maxLine = 64 << 10

// tailLines is how many recent output lines are kept for error messages.
const tailLines = 4

// lineLogger turns a plugin's output stream into slog records, one per line.
// A line that is a JSON object (hclog's @level/@message, or slog's
// level/msg) keeps its level, message and fields; a plain line is logged at
// info, or at the level of a "[WARN]"-style prefix; a Go panic and
// everything after it is logged at error. It remembers the last lines and
// the first panic line for error messages. It is safe for concurrent use.
type lineLogger struct {
	log    *slog.Logger
	stream string

	mu      sync.Mutex
	buf     []byte
	inPanic bool
	panic   string
	tail    []string
}

var _ io.Writer = (*lineLogger)(nil)

func newLineLogger(l *slog.Logger, stream string) *lineLogger {
	return &lineLogger{log: l, stream: stream}
}

// Write implements io.Writer.
func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) >= maxLine {
		w.line(w.buf)
		w.buf = nil
	}
	if len(w.buf) == 0 {
		w.buf = nil // let a large buffer go
	}
	return len(p), nil
}

// Flush logs a last line that did not end in a newline.
func (w *lineLogger) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.line(w.buf)
		w.buf = nil
	}
}

// Tail returns the last lines written, oldest first, and the first line of a
// Go panic if there was one.
func (w *lineLogger) Tail() (lines []string, panicLine string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.tail...), w.panic
}

func (w *lineLogger) line(b []byte) {
	b = bytes.TrimRight(b, "\r")
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	text := string(b)
	if len(w.tail) == tailLines {
		copy(w.tail, w.tail[1:])
		w.tail = w.tail[:tailLines-1]
	}
	w.tail = append(w.tail, text)

	if b[0] == '{' {
		var fields map[string]any
		if json.Unmarshal(b, &fields) == nil {
			w.logJSON(fields)
			return
		}
	}
	level := slog.LevelInfo
	switch {
	case strings.HasPrefix(text, "panic: ") || strings.HasPrefix(text, "fatal error: "):
		if w.panic == "" {
			w.panic = text
		}
		w.inPanic = true
		level = slog.LevelError
	case w.inPanic:
		level = slog.LevelError
	case strings.HasPrefix(text, "[TRACE]"):
		level = LevelTrace
	case strings.HasPrefix(text, "[DEBUG]"):
		level = slog.LevelDebug
	case strings.HasPrefix(text, "[WARN]"):
		level = slog.LevelWarn
	case strings.HasPrefix(text, "[ERROR]"), strings.HasPrefix(text, "[ERR]"):
		level = slog.LevelError
	}
	w.log.Log(context.Background(), level, text, "stream", w.stream)
}

// logJSON logs one structured line of the plugin's own logger.
func (w *lineLogger) logJSON(fields map[string]any) {
	level := slog.LevelInfo
	msg := ""
	var attrs []any
	if _, ok := fields["stream"]; !ok {
		// A line of the plugin's own that names a stream (an upstream's
		// stderr, relayed) keeps that one alone.
		attrs = append(attrs, "stream", w.stream)
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v := fields[k]
		switch k {
		case "@level", "level":
			if s, ok := v.(string); ok {
				level = parseLevel(s)
			}
		case "@message", "msg", "message":
			msg = fmt.Sprint(v)
		case "@timestamp", "timestamp", "time":
			// The record gets the gateway's time.
		default:
			attrs = append(attrs, strings.TrimPrefix(k, "@"), v)
		}
	}
	w.log.Log(context.Background(), level, msg, attrs...)
}

// parseLevel maps a level name (hclog's, slog's, or a common one) to slog.
func parseLevel(s string) slog.Level {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "trace":
		return LevelTrace
	case "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error", "err", "fatal", "panic", "critical":
		return slog.LevelError
	}
	var l slog.Level
	if l.UnmarshalText([]byte(s)) == nil {
		return l
	}
	return slog.LevelInfo
}

// hclogAdapter routes go-plugin's own logging (handshake steps, process
// exits) into slog. The supervisor reports what an operator needs to know,
// so go-plugin's records are logged at debug at most; a plugin's output does
// not pass through here (see lineLogger).
type hclogAdapter struct {
	log     *slog.Logger
	name    string
	implied []any
}

var _ hclog.Logger = (*hclogAdapter)(nil)

func (a *hclogAdapter) level(l hclog.Level) slog.Level {
	if l == hclog.Trace {
		return LevelTrace
	}
	return slog.LevelDebug
}

func (a *hclogAdapter) enabled(l slog.Level) bool {
	return a.log.Enabled(context.Background(), l)
}

// Log implements hclog.Logger.
func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	l := a.level(level)
	if !a.enabled(l) {
		return
	}
	all := make([]any, 0, len(a.implied)+len(args)+2)
	if a.name != "" {
		all = append(all, "component", a.name)
	}
	all = append(all, a.implied...)
	all = append(all, args...)
	a.log.Log(context.Background(), l, msg, all...)
}

// Trace implements hclog.Logger.
func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }

// Debug implements hclog.Logger.
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }

// Info implements hclog.Logger.
func (a *hclogAdapter) Info(msg string, args ...any) { a.Log(hclog.Info, msg, args...) }

// Warn implements hclog.Logger.
func (a *hclogAdapter) Warn(msg string, args ...any) { a.Log(hclog.Warn, msg, args...) }

// Error implements hclog.Logger.
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

// IsTrace implements hclog.Logger.
func (a *hclogAdapter) IsTrace() bool { return a.enabled(LevelTrace) }

// IsDebug implements hclog.Logger.
func (a *hclogAdapter) IsDebug() bool { return a.enabled(slog.LevelDebug) }

// IsInfo implements hclog.Logger.
func (a *hclogAdapter) IsInfo() bool { return a.enabled(slog.LevelDebug) }

// IsWarn implements hclog.Logger.
func (a *hclogAdapter) IsWarn() bool { return a.enabled(slog.LevelDebug) }

// IsError implements hclog.Logger.
func (a *hclogAdapter) IsError() bool { return a.enabled(slog.LevelDebug) }

// ImpliedArgs implements hclog.Logger.
func (a *hclogAdapter) ImpliedArgs() []any { return a.implied }

// With implements hclog.Logger.
func (a *hclogAdapter) With(args ...any) hclog.Logger {
	c := *a
	c.implied = append(append([]any(nil), a.implied...), args...)
	return &c
}

// Name implements hclog.Logger.
func (a *hclogAdapter) Name() string { return a.name }

// Named implements hclog.Logger.
func (a *hclogAdapter) Named(name string) hclog.Logger {
	if a.name != "" {
		name = a.name + "." + name
	}
	return a.ResetNamed(name)
}

// ResetNamed implements hclog.Logger.
func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *a
	c.name = name
	return &c
}

// SetLevel implements hclog.Logger; the slog handler decides.
func (a *hclogAdapter) SetLevel(hclog.Level) {}

// GetLevel implements hclog.Logger.
func (a *hclogAdapter) GetLevel() hclog.Level {
	switch {
	case a.IsTrace():
		return hclog.Trace
	case a.IsDebug():
		return hclog.Debug
	}
	return hclog.Off
}

// StandardLogger implements hclog.Logger.
func (a *hclogAdapter) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)
}

// StandardWriter implements hclog.Logger.
func (a *hclogAdapter) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	return a.StandardLogger(opts).Writer()
}
