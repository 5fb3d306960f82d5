package gateway

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// What an executor reports through Watch about a third-party plugin's
// source reaches the log: a failure at ERROR once per distinct error, the
// source ready again and new definitions at INFO. A source whose load
// failed stays failed while a retry of it starts, so that /readyz and the
// error of a call of its tools say the same.
func TestOnChangeLogsAndKeepsFailed(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader("servers: {}\n"), "t.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testenv.Buffer{}
	g, err := New(Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(logs, nil)), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	s := &source{id: "rows", execName: "rows", namespace: "rows", plugin: &pluginFile{path: "/p/rows"},
		st: SourceStatus{Name: "rows", Executor: "rows", State: "starting"}}
	g.mu.Lock()
	g.putSource(s)
	g.mu.Unlock()
	status := func(state, lastErr string) sdk.Change {
		return sdk.Change{Source: "rows", Status: &sdk.Status{State: state, LastError: lastErr}}
	}

	// A failed load, then its retry's start as the executor reports it.
	s.setState("failed", "upstream exited (exit status 3)")
	g.onChange("rows", status("starting", ""))
	if st := s.status(); st.State != "failed" || !strings.Contains(g.unknownToolHint("rows__x"), "is failed: upstream exited (exit status 3)") {
		t.Errorf("a retry's start: status %+v, hint %q; want failed", st, g.unknownToolHint("rows__x"))
	}

	// A loaded source.
	s.mu.Lock()
	s.loaded, s.served = true, true
	s.mu.Unlock()
	s.setState("ready", "")
	g.onChange("rows", status("failed", "rows.yaml: no such file"))
	g.onChange("rows", status("failed", "rows.yaml: no such file"))
	g.onChange("rows", status("ready", ""))
	two := []json.RawMessage{json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`), json.RawMessage(`{"name":"b","inputSchema":{"type":"object"}}`)}
	g.onChange("rows", sdk.Change{Source: "rows", Definitions: &sdk.Definitions{Tools: two}})

	out := logs.String()
	failed := `level=ERROR msg="source failed" source=rows executor=rows err="rows.yaml: no such file"`
	if n := strings.Count(out, failed); n != 1 {
		t.Errorf("the log has %d lines %s, want 1:\n%s", n, failed, out)
	}
	for _, want := range []string{
		`level=INFO msg="source ready again" source=rows executor=rows`,
		`level=INFO msg="source definitions changed" source=rows executor=rows tools=2 resources=0 prompts=0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
}

// A server whose config entry has a problem is never started, so nothing
// an executor reports under its name is about it: a reload that replaced
// a running server of that name by a broken entry may still get the old
// one's "stopped", and it must not turn the entry's "failed" into it.
func TestOnChangeLeavesNotStartedServer(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader("servers: {}\n"), "t.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(&testenv.Buffer{}, nil)), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	problem := &config.Error{Pos: config.Pos{File: "run.yaml", Line: 3}, Field: "servers.everything.start", Msg: `unknown value "never"`}
	s := &source{id: "everything", execName: "mcp", namespace: "everything", server: &config.Server{Problem: problem},
		st: SourceStatus{Name: "everything", Executor: "mcp"}}
	g.mu.Lock()
	g.putSource(s)
	g.mu.Unlock()
	s.setState("failed", "not started: "+problem.Error())
	g.onChange("mcp", sdk.Change{Source: "everything", Status: &sdk.Status{State: "stopped"}})
	if st := s.status(); st.State != "failed" || !strings.Contains(st.LastError, "not started: ") {
		t.Errorf("after the old server's stopped: %+v; want still failed, not started", st)
	}
}
