package frontend

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
	if err := fe.subscribe(ctx, "A", "demo://doc", quietCall{}); err != nil {
		t.Fatal(err)
	}
	step("first subscriber", "resources/subscribe demo://doc")
	_ = fe.subscribe(ctx, "B", "demo://doc", quietCall{})
	_ = fe.subscribe(ctx, "A", "demo://doc", quietCall{})
	step("second subscriber, and a repeat")
	if err := fe.subscribe(ctx, "A", "demo://item/7", quietCall{}); err != nil {
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
	if err := fe.subscribe(ctx, "A", "demo://refuse/1", quietCall{}); err == nil {
		t.Error("a subscription the source refused succeeded")
	}
	// A URI no source lists is acknowledged (servers may accept URIs they
	// do not list) but goes to no source and is not recorded.
	if err := fe.subscribe(ctx, "A", "demo://elsewhere", quietCall{}); err != nil {
		t.Errorf("a subscription to a resource no source lists: %v", err)
	}
	for _, uri := range []string{"demo://refuse/1", "demo://elsewhere"} {
		if got := fe.subscribers(uri); len(got) != 0 {
			t.Errorf("%s was recorded: %v", uri, got)
		}
	}
	step("refusals")
}

// chattyRouter is a source that logs while it handles a subscription, as
// server-everything does ("Received Subscribe Resource request").
type chattyRouter struct{}

func (chattyRouter) Call(_ context.Context, _ *catalog.Item, method string, _ json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	_ = call.Notify(sdk.Notification{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"during ` + method + `"}`)})
	_ = call.Progress(sdk.Progress{Progress: 1})
	return json.RawMessage(`{}`), nil
}

// TestListenAcknowledgedFirst: a 2026-07-28 subscriptions/listen stream
// begins with its acknowledgement, and what the source sends while the
// gateway subscribes it (a log message) does not reach the client — the
// request asked for no log level, and nothing may precede the
// acknowledgement — over HTTP and over stdio.
func TestListenAcknowledgedFirst(t *testing.T) {
	fe := New(chattyRouter{}, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"demo://doc","name":"doc"}`)},
	}}}, catalog.Options{}))
	body := `{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["demo://doc"]},` + modernMetaOf("") + `}}`
	const ack = "notifications/subscriptions/acknowledged"
	methodOf := func(line string) string {
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal([]byte(line), &m)
		return m.Method
	}

	t.Run("http", func(t *testing.T) {
		ts := httptest.NewServer(fe.Handler())
		defer ts.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var first string
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				first = data
				break
			}
		}
		if methodOf(first) != ack {
			t.Errorf("the stream's first message: %q; want %s", first, ack)
		}
	})

	t.Run("stdio", func(t *testing.T) {
		c := serveStdio(t, fe)
		c.write(t, body)
		timeout := time.After(10 * time.Second)
		for {
			select {
			case line := <-c.lines:
				if m := methodOf(line); m != ack {
					t.Fatalf("before the acknowledgement: %q", line)
				}
				return
			case <-timeout:
				t.Fatal("no acknowledgement over stdio within 10 s")
			}
		}
	})
}
