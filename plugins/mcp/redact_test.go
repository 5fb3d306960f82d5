package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
)

func TestRedactURLs(t *testing.T) {
	for in, want := range map[string]string{
		`Post "https://u:pw@api.example/mcp?api_key=SECRET&x=1": dial tcp`: `Post "https://u:xxxxx@api.example/mcp?api_key=xxxxx&x=xxxxx": dial tcp`,
		`connect http://127.0.0.1:9/mcp: refused`:                          `connect http://127.0.0.1:9/mcp: refused`,
		`token ghp_abc in stderr`:                                          `token ghp_abc in stderr`,
		`https://user@host/p`:                                              `https://user@host/p`,
	} {
		if got := redactURLs(in); got != want {
			t.Errorf("redactURLs(%q) = %q, want %q", in, got, want)
		}
	}
}

// A server URL's credentials stay out of the load error and the status.
func TestURLCredentialsRedacted(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := h.c.Load(ctx, sdk.LoadRequest{Source: "secret", Kind: Kind,
		Spec: mustJSON(map[string]any{"url": "http://user:hunter2@127.0.0.1:1/mcp?api_key=SUPERSECRET"})})
	if err == nil || strings.Contains(err.Error(), "SUPERSECRET") || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "api_key=xxxxx") {
		t.Fatalf("load error = %v", err)
	}
	for _, st := range h.statuses("secret") {
		if strings.Contains(st.LastError, "SUPERSECRET") || strings.Contains(st.LastError, "hunter2") {
			t.Fatalf("status: %+v", st)
		}
	}
	if logs := h.logs.String(); strings.Contains(logs, "SUPERSECRET") || strings.Contains(logs, "hunter2") {
		t.Fatalf("the executor's log shows the credentials:\n%s", logs)
	}
}
