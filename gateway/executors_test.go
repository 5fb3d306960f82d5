package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestExecutorsStartOnce: callers that ask for an executor while it starts
// share that one start, and nothing starts once the set is closed.
func TestExecutorsStartOnce(t *testing.T) {
	e := newExecutors("/nonexistent/skillgate", slog.New(slog.NewTextHandler(io.Discard, nil)), 0, 0)
	ctx := context.Background()
	got := make([]sdk.Executor, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ex, info, err := e.get(ctx, "script", true)
			if err != nil || info.Name != "script" {
				t.Errorf("get: %+v, %v", info, err)
			}
			got[i] = ex
		}()
	}
	wg.Wait()
	for i, ex := range got {
		if ex == nil || ex != got[0] {
			t.Fatalf("caller %d got executor %p, caller 0 got %p: want one shared instance", i, ex, got[0])
		}
	}
	if err := e.close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.get(ctx, "wasm", true); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close: %v, want ErrClosed", err)
	}
}

// TestReservedNamespaces: every namespace the gateway's own tools use is
// one that config refuses to servers and the gateway to plugins.
func TestReservedNamespaces(t *testing.T) {
	own := []string{ToolsNamespace, pipelinesNamespace}
	for g := range adminGroups {
		own = append(own, g)
	}
	for _, ns := range own {
		if !config.IsReservedNamespace(ns) {
			t.Errorf("the gateway's namespace %q is not in config.ReservedNamespaces %v", ns, config.ReservedNamespaces())
		}
	}
}

// TestLogLevel maps the levels executors log at.
func TestLogLevel(t *testing.T) {
	for _, c := range []struct {
		in    string
		want  slog.Level
		known bool
	}{
		{"debug", slog.LevelDebug, true}, {"INFO", slog.LevelInfo, true}, {"warn", slog.LevelWarn, true},
		{"error", slog.LevelError, true}, {"warning", slog.LevelWarn, true}, {"Trace", slog.LevelDebug, true},
		{"fatal", slog.LevelError, true}, {"critical", slog.LevelError, true}, {"panic", slog.LevelError, true},
		{"notice", slog.LevelInfo, true}, {"WARN+2", slog.LevelWarn + 2, true}, {"", slog.LevelInfo, true},
		{"verbose", slog.LevelInfo, false}, {"5", slog.LevelInfo, false},
	} {
		got, known := logLevel(c.in)
		if got != c.want || known != c.known {
			t.Errorf("logLevel(%q) = %v, %v; want %v, %v", c.in, got, known, c.want, c.known)
		}
	}
}
