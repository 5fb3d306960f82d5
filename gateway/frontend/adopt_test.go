package frontend

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestNewRulesKeepActivations: new disclosure rules keep what each session
// activated and they still serve; a session whose list they change (a
// deny drops one of its tools) gets a list_changed, a session whose list
// they leave as it was gets none.
func TestNewRulesKeepActivations(t *testing.T) {
	rules := func(desc string, deny ...string) *disclosure.Disclosure {
		return disclosure.New(disclosure.Options{Mode: disclosure.ModeProgressive, Profiles: []disclosure.Profile{
			{Name: "p", Description: desc, Servers: []string{"a"}, Deny: deny},
		}})
	}
	fe := New(&sourceRouter{}, Options{Disclosure: rules("one")})
	snap := catalog.Build([]catalog.Source{{ID: "a", Namespace: "a", Executor: "x", Defs: sdk.Definitions{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"t1","inputSchema":{"type":"object"}}`), json.RawMessage(`{"name":"t2","inputSchema":{"type":"object"}}`),
	}}}}, catalog.Options{})
	fe.Publish(snap, nil)
	ctx := context.Background()
	sessions := map[string]*logSession{}
	for _, id := range []string{"s", "u"} {
		sessions[id] = &logSession{id: id, ch: make(chan mcp.JSONRPCNotification, 8)}
		if err := fe.mcp.RegisterSession(ctx, sessions[id]); err != nil {
			t.Fatal(err)
		}
	}
	activate := map[string]string{"s": `["a__t1"]`, "u": `["a__t2"]`}
	for id, targets := range activate {
		raw, err := fe.Disclosure().CallMeta(ctx, snap, disclosure.Request{Profile: "p", Session: id}, disclosure.Activate,
			json.RawMessage(`{"targets":`+targets+`}`), nil, nil)
		if err != nil || !strings.Contains(string(raw), `"Activated`) {
			t.Fatalf("activate %s: %s %v", targets, raw, err)
		}
	}
	drain := func(id string) int {
		n := 0
		for {
			select {
			case m := <-sessions[id].ch:
				if m.Method == string(mcp.MethodNotificationToolsListChanged) {
					n++
				}
			default:
				return n
			}
		}
	}
	drain("s")
	drain("u")
	lists := func() (s, u []byte) {
		d := fe.Disclosure()
		return d.ToolsJSON(snap, disclosure.Request{Profile: "p", Session: "s"}), d.ToolsJSON(snap, disclosure.Request{Profile: "p", Session: "u"})
	}
	s0, u0 := lists()
	if !strings.Contains(string(s0), `"a__t1"`) || !strings.Contains(string(u0), `"a__t2"`) {
		t.Fatalf("activations not listed: %s\n%s", s0, u0)
	}

	fe.SetDisclosure(rules("two"))
	if s1, u1 := lists(); string(s1) != string(s0) || string(u1) != string(u0) {
		t.Errorf("a new profile description changed the sessions' lists:\n%s\n%s", s1, u1)
	}
	if ns, nu := drain("s"), drain("u"); ns+nu != 0 {
		t.Errorf("a new profile description sent list_changed: %d to s, %d to u; want none", ns, nu)
	}

	fe.SetDisclosure(rules("two", "*t1"))
	if s2, u2 := lists(); strings.Contains(string(s2), `"a__t1"`) || string(u2) != string(u0) || !strings.Contains(string(u2), `"a__t2"`) {
		t.Errorf("a deny of a__t1: session s lists %s (want a__t1 gone), u lists %s (want a__t2 as before)", s2, u2)
	}
	if ns, nu := drain("s"), drain("u"); ns != 1 || nu != 0 {
		t.Errorf("a deny of a__t1 sent list_changed: %d to s (want 1), %d to u (want 0)", ns, nu)
	}
}
