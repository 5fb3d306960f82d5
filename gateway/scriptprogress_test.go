package gateway_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestScriptProgressAndCallback runs the bundled summarize_files example (a
// Node jsonrpc script) through the gateway with mcp-go's client in both
// eras: its progress reaches the client, and the word_count tool it calls
// back through the gateway (a Python script) answers it.
func TestScriptProgressAndCallback(t *testing.T) {
	needInterpreters(t, "python3", "node")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	for _, name := range []string{"summarize_files", "word_count"} {
		copyDir(t, filepath.Join("..", "examples", "tools", name), filepath.Join(dir, name))
	}
	r := startGateway(t, toolsConfig(dir, ""), nil)
	r.waitReady(t, "tool:summarize_files", "tool:word_count")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, era := range []string{legacy, "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			gc := newGoClient(t, ctx, r.url+"/mcp", era)
			res := gc.call(t, ctx, "tools__summarize_files", map[string]any{
				"texts": []any{"one two three", "four five", "six"}, "tool": "tools__word_count",
			}, "tok-"+era)
			if res.IsError {
				t.Fatalf("summarize_files: %s", resultText(res))
			}
			if txt := resultText(res); !strings.Contains(txt, "6") {
				t.Errorf("summarize_files result lacks the total of 6 words: %s", txt)
			}
			gc.mu.Lock()
			prog := slices.Clone(gc.prog)
			gc.mu.Unlock()
			if len(prog) < 3 {
				t.Errorf("progress notifications = %v, want one per text", prog)
			}
		})
	}
}
