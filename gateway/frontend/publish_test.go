package frontend

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// source is a catalog source of the tools, prompts, resources and
// templates named, each a minimal definition; a name starting with "~"
// gets "v2" in its description (a changed definition).
func source(id string, tools, prompts, resources, templates []string) catalog.Source {
	var d sdk.Definitions
	def := func(key, name string) json.RawMessage {
		desc := "v1"
		if strings.HasPrefix(name, "~") {
			name, desc = name[1:], "v2"
		}
		extra := ""
		if key == "name" && tools != nil {
			extra = `,"inputSchema":{"type":"object"}`
		}
		return json.RawMessage(fmt.Sprintf(`{%q:%q,"name":"n","description":%q%s}`, key, name, desc, extra))
	}
	for _, n := range tools {
		d.Tools = append(d.Tools, def("name", n))
	}
	for _, n := range prompts {
		d.Prompts = append(d.Prompts, json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"v1"}`, n)))
	}
	for _, n := range resources {
		d.Resources = append(d.Resources, def("uri", n))
	}
	for _, n := range templates {
		d.ResourceTemplates = append(d.ResourceTemplates, def("uriTemplate", n))
	}
	return catalog.Source{ID: id, Namespace: id, Executor: "x", Defs: d}
}

// TestPublishNotifiesOncePerKind: a session is sent one list_changed for
// each kind of list an update changes — whatever it adds, changes and
// removes at once — and none for a kind it leaves as it was. Every item
// listed stays reachable through mcp-go.
func TestPublishNotifiesOncePerKind(t *testing.T) {
	fe := New(&sourceRouter{}, Options{})
	sess := &logSession{id: "s", ch: make(chan mcp.JSONRPCNotification, 64)}
	if err := fe.mcp.RegisterSession(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	changes := func() map[string]int {
		got := map[string]int{}
		for {
			select {
			case n := <-sess.ch:
				got[strings.TrimSuffix(strings.TrimPrefix(n.Method, "notifications/"), "/list_changed")]++
			default:
				return got
			}
		}
	}
	build := func(srcs ...catalog.Source) *catalog.Snapshot { return catalog.Build(srcs, catalog.Options{}) }
	a := source("a", []string{"t1", "t2"}, []string{"p1"}, []string{"demo://a/1", "demo://a/odd one"}, []string{"demo://a/{id}"})
	b := source("b", []string{"t"}, []string{"p"}, []string{"demo://b/1"}, []string{"demo://b/{id}"})
	aChanged := source("a", []string{"~t1", "t2"}, []string{"p1"}, []string{"demo://a/1", "demo://a/odd one"}, []string{"demo://a/{id}"})
	c := source("c", []string{"t"}, []string{"p"}, []string{"demo://c/1", "demo://c/odd one"}, []string{"demo://c/{id}"})
	for _, step := range []struct {
		what string
		snap *catalog.Snapshot
		disc *disclosure.Disclosure
		want string
	}{
		{"first sources", build(a, b), nil, "map[prompts:1 resources:1 tools:1]"},
		{"the same again", build(a, b), nil, "map[]"},
		{"one source added, one removed, a tool changed", build(aChanged, c), nil, "map[prompts:1 resources:1 tools:1]"},
		{"a tool changed", build(a, c), nil, "map[tools:1]"},
		{"a source removed", build(a), nil, "map[prompts:1 resources:1 tools:1]"},
		{"a template added", build(a, source("d", nil, nil, nil, []string{"demo://d/{id}"})), nil, "map[resources:1]"},
		// Registered by itself: no other odd resource changes meanwhile.
		{"a template of literal text the catch-all cannot match", build(a, source("d", nil, nil, nil, []string{"demo://ü/{id}"})), nil, "map[resources:1]"},
		// Rules that list the same: no client's list changed.
		{"new disclosure rules listing the same", nil, disclosure.New(disclosure.Options{}), "map[]"},
		{"new disclosure rules listing less", nil, disclosure.New(disclosure.Options{Mode: disclosure.ModeProgressive}), "map[tools:1]"},
		{"new rules and new tools", build(a, c), disclosure.New(disclosure.Options{}), "map[prompts:1 resources:1 tools:1]"},
		{"everything removed", build(), nil, "map[prompts:1 resources:1 tools:1]"},
	} {
		fe.Publish(step.snap, step.disc)
		if got := fmt.Sprint(changes()); got != step.want {
			t.Errorf("%s: list_changed by kind %s, want %s", step.what, got, step.want)
		}
		checkRegistered(t, step.what, fe)
	}
}

// checkRegistered checks that mcp-go holds exactly the snapshot's tools and
// prompts (and the meta-tools), and reads every resource the snapshot lists
// through mcp-go.
func checkRegistered(t *testing.T, what string, fe *Server) {
	t.Helper()
	snap := fe.Snapshot()
	tools, prompts := fe.mcp.ListTools(), fe.mcp.ListPrompts()
	if len(tools) != len(snap.Tools())+len(disclosure.Names) {
		t.Errorf("%s: mcp-go holds %d tools, want %d and the meta-tools", what, len(tools), len(snap.Tools()))
	}
	for _, it := range snap.Tools() {
		if tools[it.Name] == nil {
			t.Errorf("%s: mcp-go lacks tool %s", what, it.Name)
		}
	}
	if len(prompts) != len(snap.Prompts()) {
		t.Errorf("%s: mcp-go holds %d prompts, want %d", what, len(prompts), len(snap.Prompts()))
	}
	var uris []string
	for _, it := range snap.Resources() {
		uris = append(uris, it.Name)
	}
	for _, it := range snap.ResourceTemplates() {
		uris = append(uris, strings.ReplaceAll(it.Name, "{id}", "7"))
	}
	for _, uri := range uris {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":%q}}`, uri)
		res := fe.mcp.HandleMessage(context.Background(), json.RawMessage(req))
		if e, ok := res.(mcp.JSONRPCError); ok {
			t.Errorf("%s: read %s through mcp-go: %+v", what, uri, e.Error)
		}
	}
}
