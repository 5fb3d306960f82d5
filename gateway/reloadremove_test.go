package gateway_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
)

// TestReloadRemovesAtOnce: a server that a reload removes leaves the
// catalog, and clients are sent tools/list_changed, as soon as the reload
// decides it, not when the reload returns: here the reload still waits
// for a new server's start. The rest of the reload is told when it ends.
func TestReloadRemovesAtOnce(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	r := startGateway(t, richServers(bin, "keep=keep", "drop=drop"), nil)
	r.waitReady(t, "keep", "drop")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	waitCallable(t, ctx, c, "keep__whoami", "drop__whoami")
	events, err := c.listen(ctx)
	if err != nil {
		t.Fatalf("open the session's SSE stream: %v", err)
	}
	listChanges(t, events, nil, 500*time.Millisecond) // what was queued before

	gate := filepath.Join(t.TempDir(), "go") // late starts once this file exists
	late := fmt.Sprintf("  late:\n    command: sh\n    args: [\"-c\", %s, %s, %s]\n",
		strconv.Quote(`while [ ! -e "$0" ]; do sleep 0.1; done; exec "$1" -tag late`), strconv.Quote(gate), strconv.Quote(bin))
	cfg, err := config.Parse(strings.NewReader(richServers(bin, "keep=keep")+late), "reload.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.gw.Reload(ctx, cfg) }()

	got := listChanges(t, events, map[string]int{"tools": 1}, 500*time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the reload returned (%v) before late started", err)
	default:
	}
	if got["tools"] != 1 {
		t.Errorf("while the reload waits for late: list_changed by kind %v, want tools once", got)
	}
	snap := r.gw.Snapshot()
	if _, ok := snap.Tool("drop__whoami"); ok {
		t.Errorf("drop__whoami is still served while the reload waits for late")
	}
	if _, ok := snap.Tool("keep__whoami"); !ok {
		t.Errorf("keep__whoami is not served while the reload waits for late")
	}
	names := toolNamesOf(t, ctx, c)
	if names["drop__whoami"] || !names["keep__whoami"] {
		t.Errorf("tools/list while the reload waits for late: %v", names)
	}

	writeFile(t, gate, "")
	if err := <-done; err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := listChanges(t, events, map[string]int{"tools": 1}, 500*time.Millisecond); got["tools"] != 1 {
		t.Errorf("at the end of the reload: list_changed by kind %v, want tools once", got)
	}
	if _, ok := r.gw.Snapshot().Tool("late__whoami"); !ok {
		t.Errorf("late__whoami is not served after the reload")
	}
}
