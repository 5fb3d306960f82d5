package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
)

// TestProfileChangeListChanged reloads new rules for the profile a client
// is connected to, with the same servers: each kind's list_changed is sent
// when the list of that kind the profile serves changed, and only then (a
// new description changes none).
func TestProfileChangeListChanged(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	servers := richServers(bin, "keep=keep", "other=other")
	r := startGateway(t, servers+"profiles:\n  small: {servers: [keep]}\n", nil)
	r.waitReady(t, "keep", "other")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := r.url + "/mcp/p/small"
	c := newRawClient(t, ctx, url, legacyVersion)
	waitCallable(t, ctx, c, "keep__whoami")
	events, err := c.listen(ctx)
	if err != nil {
		t.Fatalf("open the session's SSE stream: %v", err)
	}
	// A client we did not write sees the same: the official Go SDK's.
	takeSDK := sdkListChanges(t, ctx, url)
	listChanges(t, events, nil, 500*time.Millisecond) // what was queued before
	takeSDK(nil)

	for _, tc := range []struct {
		name, profile string
		want          map[string]int
	}{
		// other's prompts join; its resources lose their URIs to keep's,
		// which stay.
		{"a server added to the profile", "{servers: [keep, other]}", map[string]int{"tools": 1, "prompts": 1}},
		{"only the description changed", "{servers: [keep, other], description: small one}", map[string]int{}},
		// keep's prompts and resources leave; other's resources are not
		// in the catalog (keep's won), so the profile has none.
		{"the profile's first server removed", "{servers: [other]}", map[string]int{"tools": 1, "prompts": 1, "resources": 1}},
	} {
		cfg, err := config.Parse(strings.NewReader(servers+"profiles:\n  small: "+tc.profile+"\n"), "reload.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.gw.Reload(ctx, cfg); err != nil {
			t.Fatalf("Reload: %v", err)
		}
		got := listChanges(t, events, tc.want, 1500*time.Millisecond)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: list_changed by kind = %v, want %v", tc.name, got, tc.want)
		}
		if got := takeSDK(tc.want); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: the Go SDK's client saw list_changed by kind %v, want %v", tc.name, got, tc.want)
		}
	}
}
