package gateway

import "testing"

// TestSourceKind: messages name a source by what it is, so a plugin whose
// tools are missing is not called a server.
func TestSourceKind(t *testing.T) {
	for _, c := range []struct {
		st   SourceStatus
		want string
	}{
		{SourceStatus{Name: "everything", Executor: "mcp"}, "server"},
		{SourceStatus{Name: "rows", Executor: "rows"}, "plugin"},
		{SourceStatus{Name: "tool:slugify", Executor: "script"}, "tool folder"},
		{SourceStatus{Name: "skill-tool:pg/sizes", Executor: "script"}, "skill tool folder"},
		{SourceStatus{Name: "skill-pipelines:pg", Executor: "pipelines"}, "skill pipelines"},
		{SourceStatus{Name: "pipelines", Executor: "pipelines"}, "pipelines"},
		{SourceStatus{Name: "@tool", Executor: "gateway"}, "gateway tools"},
	} {
		if got := c.st.Kind(); got != c.want {
			t.Errorf("%+v: Kind = %q, want %q", c.st, got, c.want)
		}
	}
}
