//go:build linux

package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// A Load that ignores its context runs out of LoadWithin's deadline: the
// call fails saying so, the stuck process is killed (within the kill
// window: its SDK cannot stop while the Load runs) and a new one serves
// the sources loaded before. A caller that gives up first restarts nothing.
func TestLoadWithinRestartsStuckPlugin(t *testing.T) {
	checkLeaks(t)
	p := startPlugin(t, helperSpec(t, "serve"), host.Options{KillWindow: 500 * time.Millisecond, MinBackoff: 10 * time.Millisecond})
	ctx := context.Background()
	if _, err := p.Load(ctx, sdk.LoadRequest{Source: "a", Kind: "echo", Spec: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	hang := sdk.LoadRequest{Source: "h", Kind: "echo", Spec: json.RawMessage(`"hang"`)}

	// The caller's own cancel is no verdict on the plugin.
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := p.LoadWithin(cctx, hang, time.Minute)
	cancel()
	if errors.Is(err, host.ErrLoadTimeout) {
		t.Fatalf("a Load the caller gave up on: %v, want no ErrLoadTimeout", err)
	}
	first := p.Status().PID
	if st := p.Status(); st.State != host.StateRunning || st.Restarts != 0 {
		t.Fatalf("the caller's cancel restarted the plugin: %+v", st)
	}

	_, err = p.LoadWithin(ctx, hang, 300*time.Millisecond)
	if !errors.Is(err, host.ErrLoadTimeout) ||
		!strings.Contains(err.Error(), `executor "echo" did not answer Load within 300ms; it must return from Load or honour its context`) {
		t.Fatalf("LoadWithin of a stuck Load: %v", err)
	}
	waitFor(t, 30*time.Second, "the stuck process to be killed", func() bool { return !testenv.Alive(first) })
	waitFor(t, 30*time.Second, "a new process", func() bool {
		st := p.Status()
		return st.State == host.StateRunning && st.PID != first
	})
	if st := p.Status(); !strings.Contains(st.LastError, `did not answer Load of source "h" within 300ms`) {
		t.Errorf("Status.LastError = %q, want why it was restarted", st.LastError)
	}
	if _, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "echo", Params: json.RawMessage(`{}`)}, nil); err != nil {
		t.Errorf("source a after the restart: %v", err)
	}
}
