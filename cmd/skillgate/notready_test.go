package main

import (
	"bytes"
	"testing"

	"github.com/skillgate/skillgate/gateway"
)

// lastError drops the source's name only where the executor put it, in
// front of the cause, and printNotReady names each source by its kind.
func TestNotReadyWordsSourceAndError(t *testing.T) {
	for _, tc := range []struct {
		st            gateway.SourceStatus
		last, printed string
	}{
		{gateway.SourceStatus{Name: "everything", Executor: "mcp", State: "failed", LastError: `source "everything": exit status 3`},
			"exit status 3", "server everything failed: exit status 3\n"},
		{gateway.SourceStatus{Name: "bad-panicload", Executor: "bad-panicload", State: "failed",
			LastError: `executor panicked in Load of source "bad-panicload": boom in load`},
			`executor panicked in Load of source "bad-panicload": boom in load`,
			`plugin bad-panicload failed: executor panicked in Load of source "bad-panicload": boom in load; fix the executor plugin or take its file out of plugins.dirs` + "\n"},
		{gateway.SourceStatus{Name: "plugin:admin", Executor: "admin", State: "failed", LastError: "the name admin is the gateway's own"},
			"the name admin is the gateway's own", "plugin admin failed: the name admin is the gateway's own\n"},
		{gateway.SourceStatus{Name: "plugin:tool", Executor: "tool", State: "failed", LastError: `plugin /p/tool: its name "tool" is taken`},
			`plugin /p/tool: its name "tool" is taken`, `plugin tool failed: /p/tool: its name "tool" is taken` + "\n"},
		{gateway.SourceStatus{Name: "tool:slugify", Executor: "script", State: "invalid", LastError: "tool.yaml:2: runtime: unknown"},
			"tool.yaml:2: runtime: unknown", "tool folder tool:slugify is invalid: tool.yaml:2: runtime: unknown\n"},
		{gateway.SourceStatus{Name: "skill-tool:csv/x", Executor: "wasm", State: "starting"},
			"", "skill tool folder skill-tool:csv/x is starting\n"},
		{gateway.SourceStatus{Name: "skill-pipelines:csv", Executor: "pipelines", State: "failed", LastError: "2 problems"},
			"2 problems", "skill pipelines skill-pipelines:csv failed: 2 problems\n"},
		{gateway.SourceStatus{Name: "pipelines", Executor: "pipelines", State: "failed", LastError: "1 problem"},
			"1 problem", "pipelines failed: 1 problem\n"},
	} {
		if got := lastError(tc.st); got != tc.last {
			t.Errorf("lastError(%q) = %q, want %q", tc.st.LastError, got, tc.last)
		}
		var b bytes.Buffer
		printNotReady(&b, []gateway.SourceStatus{tc.st}, nil)
		if b.String() != tc.printed {
			t.Errorf("printNotReady(%s) = %q, want %q", tc.st.Name, b.String(), tc.printed)
		}
	}
}
