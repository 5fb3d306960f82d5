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
		`https://TOKEN-123456@host/p`:                                      `https://xxxxx@host/p`, // a username alone is a key
		`https://host/p#frag`:                                              `https://host/p#frag`,
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

// Secrets the names alone miss: credential names the first list lacked
// (GH_PAT_X, GITHUB_PAT, SENTRY_DSN, CONNECTION_STRING), values shaped
// like a token under any name (in env and args), the password of a URL
// in an env value, and a server url's username-only userinfo.
func TestSpecRedactTokenShapes(t *testing.T) {
	const ghp = "ghp_SHAPEabcdefghijklmnopqrstuvwxyz0123"
	spec := &Spec{
		Env: map[string]string{
			"GH_PAT_X": "pat-value-1", "GITHUB_PAT": "pat-value-2", "SENTRY_DSN": "https://dsnkey-3@o1.ingest.sentry.io/4",
			"CONNECTION_STRING": "Server=db;Password=conn-pw-4", "DATABASE_URL": "postgres://app:db-pw-5@db:5432/app",
			"ANYTHING": ghp, "LOG_DIR": "/var/log/app-visible",
		},
		Args: []string{"--opt=sk-proj-ARGabcdefghijklmnop", "xoxb-1234567890-abcdef"},
		URL:  "https://url-user-6@mcp.example.com/mcp",
	}
	text := spec.redact("pat-value-1 pat-value-2 dsnkey-3 conn-pw-4 db-pw-5 " + ghp +
		" sk-proj-ARGabcdefghijklmnop xoxb-1234567890-abcdef url-user-6 /var/log/app-visible")
	for _, v := range []string{"pat-value", "dsnkey", "conn-pw", "db-pw", "SHAPE", "ARG", "xoxb", "url-user"} {
		if strings.Contains(text, v) {
			t.Errorf("redact shows %q: %s", v, text)
		}
	}
	if !strings.Contains(text, "/var/log/app-visible") {
		t.Errorf("redact masked an ordinary value: %s", text)
	}
}
