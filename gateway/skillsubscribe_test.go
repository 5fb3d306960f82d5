package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSkillResourceSubscriptions: through the go-sdk client, in both
// eras, a client subscribes to a skill's SKILL.md and to one of its
// reference files (a 2026-07-28 client: its subscriptions/listen stream,
// which must not fail for skill:// URIs); editing each sends it
// notifications/resources/updated for that URI.
func TestSkillResourceSubscriptions(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"weekly/SKILL.md":           skillMD("weekly", "Write the weekly report."),
		"weekly/references/form.md": "# Form\n",
	})
	r := startGateway(t, "skills: {dirs: ["+dir+"]}\n", nil)
	r.waitReady(t)
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			updates := make(chan string, 16)
			c := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					updates <- req.Params.URI
				},
			})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for _, uri := range []string{"skill://weekly/SKILL.md", "skill://weekly/references/form.md"} {
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatalf("subscribe %s: %v", uri, err)
				}
			}
			for _, edit := range []struct{ file, uri, text string }{
				{"weekly/SKILL.md", "skill://weekly/SKILL.md", skillMD("weekly", "Write the weekly report.") + "\nA new step (" + era + ").\n"},
				{"weekly/references/form.md", "skill://weekly/references/form.md", "# Form\n\nA new field (" + era + ").\n"},
			} {
				if err := os.WriteFile(filepath.Join(dir, edit.file), []byte(edit.text), 0o644); err != nil {
					t.Fatal(err)
				}
				later := time.Now().Add(time.Minute)
				os.Chtimes(filepath.Join(dir, edit.file), later, later)
				for got := ""; got != edit.uri; {
					select {
					case got = <-updates:
					case <-ctx.Done():
						t.Fatalf("no notifications/resources/updated for %s after the edit", edit.uri)
					}
				}
			}
			for _, uri := range []string{"skill://weekly/SKILL.md", "skill://weekly/references/form.md"} {
				if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
					t.Errorf("unsubscribe %s: %v", uri, err)
				}
			}
		})
	}
}
