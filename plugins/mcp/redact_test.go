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

// The secrets of a spec: header values, credential-named env values and
// the listed ones, each at least redact.MinSecret long; a text cut inside
// one (see truncate) does not show its start.
func TestSpecRedactSecrets(t *testing.T) {
	spec := &Spec{
		Env:     map[string]string{"GITHUB_TOKEN": "ghp_abcdef123", "DB_PASS": "pw", "LOG_DIR": "/var/log/app", "WORKSPACE": "/srv/work"},
		Secrets: []string{"/srv/work"},
	}
	for in, want := range map[string]string{
		"token ghp_abcdef123 in /var/log/app, pw": "token xxxxx in /var/log/app, pw",
		"cd /srv/work": "cd xxxxx",
		truncate("cut in ghp_abcdef123", 11) + " and more":    "cut in xxxxx…(20 bytes) and more",
		truncate("cut before ghp_abcdef123", 8):               "cut befo…(24 bytes)",
		`malformed error: {"m":"ghp_ab…(2000 bytes)`:          `malformed error: {"m":"xxxxx…(2000 bytes)`,
		"https://u:pw@host/mcp?token=ghp_abcdef123 says ghp_": "https://u:xxxxx@host/mcp?token=xxxxx says ghp_",
	} {
		if got := spec.redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (&Spec{Headers: map[string]string{"Authorization": "Bearer tok-123456"}}).redact("sent Bearer tok-123456; token tok-123456"); got != "sent xxxxx; token xxxxx" {
		t.Errorf("header secrets: %q", got)
	}
}
