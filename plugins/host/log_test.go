package host

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

type capture struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r)
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

func attr(r slog.Record, key string) any {
	var v any
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.Any()
			return false
		}
		return true
	})
	return v
}

func TestLineLogger(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		level slog.Level
		msg   string
		key   string
		val   any
	}{
		{"plain", "hello\n", slog.LevelInfo, "hello", "stream", "stderr"},
		{"prefix", "[WARN] careful\n", slog.LevelWarn, "[WARN] careful", "", nil},
		{"hclog json", `{"@level":"error","@message":"bad","@timestamp":"2026-01-02T03:04:05.000000Z","n":1}` + "\n", slog.LevelError, "bad", "n", 1.0},
		{"slog json", `{"time":"x","level":"DEBUG","msg":"dbg","k":"v"}` + "\n", slog.LevelDebug, "dbg", "k", "v"},
		{"json naming its stream", `{"@level":"info","@message":"upstream says","stream":"stdout"}` + "\n", slog.LevelInfo, "upstream says", "stream", "stdout"},
		{"slog level offset", `{"level":"WARN+2","msg":"w"}` + "\n", slog.LevelWarn + 2, "w", "", nil},
		{"json message not a string", `{"@message":5,"@level":7}` + "\n", slog.LevelInfo, "5", "", nil},
		{"json that is not an object", "[1,2]\n", slog.LevelInfo, "[1,2]", "", nil},
		{"crlf", "dos\r\n", slog.LevelInfo, "dos", "", nil},
		{"no newline", "partial", slog.LevelInfo, "partial", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &capture{}
			w := newLineLogger(slog.New(c), "stderr")
			// Split writes: lines may arrive in pieces.
			for i := range len(tc.in) {
				_, _ = w.Write([]byte{tc.in[i]})
			}
			w.Flush()
			if len(c.recs) != 1 {
				t.Fatalf("%d records, want 1", len(c.recs))
			}
			r := c.recs[0]
			if r.Level != tc.level || r.Message != tc.msg {
				t.Errorf("record = %v %q, want %v %q", r.Level, r.Message, tc.level, tc.msg)
			}
			if tc.key != "" && attr(r, tc.key) != tc.val {
				t.Errorf("%s = %#v, want %#v", tc.key, attr(r, tc.key), tc.val)
			}
			keys := map[string]int{}
			r.Attrs(func(a slog.Attr) bool { keys[a.Key]++; return true })
			for k, n := range keys {
				if n > 1 {
					t.Errorf("key %s %d times", k, n)
				}
			}
		})
	}

	t.Run("panic", func(t *testing.T) {
		c := &capture{}
		w := newLineLogger(slog.New(c), "stderr")
		_, _ = w.Write([]byte("before\npanic: boom\n\ngoroutine 1 [running]:\nmain.main()\n"))
		levels := []slog.Level{}
		for _, r := range c.recs {
			levels = append(levels, r.Level)
		}
		want := []slog.Level{slog.LevelInfo, slog.LevelError, slog.LevelError, slog.LevelError}
		if len(levels) != len(want) {
			t.Fatalf("levels = %v, want %v", levels, want)
		}
		for i := range want {
			if levels[i] != want[i] {
				t.Fatalf("levels = %v, want %v", levels, want)
			}
		}
		lines, p := w.Tail()
		if p != "panic: boom" || len(lines) != tailLines || lines[len(lines)-1] != "main.main()" {
			t.Errorf("Tail = %q, %q", lines, p)
		}
	})

	t.Run("long line", func(t *testing.T) {
		c := &capture{}
		w := newLineLogger(slog.New(c), "stdout")
		_, _ = w.Write(make([]byte, 3*maxLine))
		if len(c.recs) == 0 || len(w.buf) >= maxLine {
			t.Errorf("%d records, %d buffered", len(c.recs), len(w.buf))
		}
	})
}

func FuzzLineLogger(f *testing.F) {
	f.Add([]byte(`{"@level":"warn","@message":"m","x":[1,{"y":null}]}` + "\n"))
	f.Add([]byte("panic: x\n\tgoroutine\n"))
	f.Add([]byte(`{"level":{"a":1},"msg":null}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w := newLineLogger(slog.New(&capture{}), "stderr")
		_, _ = w.Write(b)
		w.Flush()
		w.Tail()
	})
}

func TestBackoff(t *testing.T) {
	b := backoff{min: 100 * time.Millisecond, max: time.Second}
	prev := time.Duration(0)
	for i := range 20 {
		d := b.next()
		if d < prev && d < b.max/2 {
			t.Fatalf("step %d: %v after %v", i, d, prev)
		}
		if d < b.min/2 || d > b.max {
			t.Fatalf("step %d: %v out of [%v, %v]", i, d, b.min/2, b.max)
		}
		prev = d
	}
	b.reset()
	if d := b.next(); d > b.min {
		t.Errorf("after reset: %v", d)
	}
}
