package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// subRouter records the subscription requests sources get; URIs under
// demo://refuse/ are refused.
type subRouter struct {
	mu   sync.Mutex
	sent []string
}

func (sr *subRouter) Call(_ context.Context, _ *catalog.Item, method string, params json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
	var p struct{ URI string }
	_ = json.Unmarshal(params, &p)
	if p.URI == "demo://refuse/1" {
		return nil, errors.New("no such resource upstream")
	}
	sr.mu.Lock()
	defer sr.mu.Unlock()
	sr.sent = append(sr.sent, method+" "+p.URI)
	return json.RawMessage(`{}`), nil
}

func (sr *subRouter) take() []string {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	out := sr.sent
	sr.sent = nil
	return out
}

// TestSubscriptions: a source is subscribed once per URI whatever the
// number of sessions, unsubscribed when the last one goes (by unsubscribe
// or by ending), and a refusal leaves nothing recorded.
func TestSubscriptions(t *testing.T) {
	sr := &subRouter{}
	fe := New(sr, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Resources:         []json.RawMessage{json.RawMessage(`{"uri":"demo://doc","name":"doc"}`)},
		ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"demo://refuse/{id}","name":"r"}`), json.RawMessage(`{"uriTemplate":"demo://item/{id}","name":"item"}`)},
	}}}, catalog.Options{}))
	ctx := t.Context()
	step := func(name string, want ...string) {
		t.Helper()
		if got := sr.take(); !slices.Equal(got, want) {
			t.Errorf("%s: sources got %q; want %q", name, got, want)
		}
	}
	if err := fe.subscribe(ctx, "A", "demo://doc"); err != nil {
		t.Fatal(err)
	}
	step("first subscriber", "resources/subscribe demo://doc")
	_ = fe.subscribe(ctx, "B", "demo://doc")
	_ = fe.subscribe(ctx, "A", "demo://doc")
	step("second subscriber, and a repeat")
	if err := fe.subscribe(ctx, "A", "demo://item/7"); err != nil {
		t.Fatal(err)
	}
	step("a templated resource", "resources/subscribe demo://item/7")
	if got := fe.subscribers("demo://doc"); len(got) != 2 {
		t.Errorf("subscribers of demo://doc: %v", got)
	}
	fe.unsubscribe(ctx, "A", "demo://doc")
	step("one of two leaves")
	fe.unsubscribe(ctx, "A", "demo://doc")
	step("leaving twice")
	fe.endSubscriptions("B")
	step("the last one's session ends", "resources/unsubscribe demo://doc")
	fe.endSubscriptions("A")
	step("the other session ends", "resources/unsubscribe demo://item/7")
	if err := fe.subscribe(ctx, "A", "demo://refuse/1"); err == nil {
		t.Error("a subscription the source refused succeeded")
	}
	// A URI no source lists is acknowledged (servers may accept URIs they
	// do not list) but goes to no source and is not recorded.
	if err := fe.subscribe(ctx, "A", "demo://elsewhere"); err != nil {
		t.Errorf("a subscription to a resource no source lists: %v", err)
	}
	for _, uri := range []string{"demo://refuse/1", "demo://elsewhere"} {
		if got := fe.subscribers(uri); len(got) != 0 {
			t.Errorf("%s was recorded: %v", uri, got)
		}
	}
	step("refusals")
}
