package frontend

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// sourceRouter answers as the source of the item called would, naming that
// source, and records what each source was asked.
type sourceRouter struct {
	mu    sync.Mutex
	asked []string // source + " " + method
}

func (sr *sourceRouter) Call(_ context.Context, it *catalog.Item, method string, _ json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
	sr.mu.Lock()
	sr.asked = append(sr.asked, it.Source+" "+method)
	sr.mu.Unlock()
	switch method {
	case "completion/complete":
		return json.RawMessage(`{"completion":{"values":["from ` + it.Source + `"]}}`), nil
	case "resources/read":
		return json.RawMessage(`{"contents":[{"uri":"demo://x","text":"from ` + it.Source + `"}]}`), nil
	case "resources/subscribe", "resources/unsubscribe":
		return json.RawMessage(`{}`), nil
	}
	return json.RawMessage(`{"content":[{"type":"text","text":"from ` + it.Source + `"}]}`), nil
}

func (sr *sourceRouter) take() []string {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	out := sr.asked
	sr.asked = nil
	return out
}

// profileServer serves two sources, a and b, each with a tool t, a prompt
// q, a resource demo://<source>/doc and a template demo://<source>/{id},
// on the default endpoint and on profile p, which serves source a only.
func profileServer(t *testing.T, router Router) (*Server, string) {
	t.Helper()
	fe := New(router, Options{Disclosure: disclosure.New(disclosure.Options{
		Profiles: []disclosure.Profile{{Name: "p", Servers: []string{"a"}}},
	})})
	var srcs []catalog.Source
	for _, id := range []string{"a", "b"} {
		srcs = append(srcs, catalog.Source{ID: id, Namespace: id, Executor: "x", Defs: sdk.Definitions{
			Tools:             []json.RawMessage{json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`)},
			Prompts:           []json.RawMessage{json.RawMessage(`{"name":"q","arguments":[{"name":"who"}]}`)},
			Resources:         []json.RawMessage{json.RawMessage(`{"uri":"demo://` + id + `/doc","name":"doc"}`)},
			ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"demo://` + id + `/{id}","name":"item"}`)},
		}})
	}
	fe.Update(catalog.Build(srcs, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	t.Cleanup(ts.Close)
	return fe, ts.URL + "/mcp"
}

// sameError checks that two answers are the same refusal: HTTP status, and
// the JSON-RPC error's code and message once each request's name is taken
// out.
func sameError(t *testing.T, what string, a, b exchange, aName, bName string) {
	t.Helper()
	ea, eb := a.rpcError(t), b.rpcError(t)
	if ea == nil || eb == nil {
		t.Errorf("%s: not both refused:\n%d %q\n%d %q", what, a.status, a.body, b.status, b.body)
		return
	}
	ma, mb := strings.ReplaceAll(ea.Message, aName, "NAME"), strings.ReplaceAll(eb.Message, bName, "NAME")
	if a.status != b.status || ea.Code != eb.Code || ma != mb {
		t.Errorf("%s: refused differently:\n%d %d %q\n%d %d %q", what, a.status, ea.Code, ea.Message, b.status, eb.Code, eb.Message)
	}
}

// TestProfileCompletions: completion/complete on a profile completes only
// prompts and resource templates the profile serves; another server's is
// refused as one that does not exist, and its source is not asked.
func TestProfileCompletions(t *testing.T) {
	sr := &sourceRouter{}
	_, url := profileServer(t, sr)
	complete := func(endpoint, session, ref string) exchange {
		return do(t, http.MethodPost, endpoint, `{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":`+ref+`,"argument":{"name":"who","value":"A"}}}`, legacyHeaders(session))
	}
	prof := url + "/p/p"
	ps, ds := initSession(t, prof), initSession(t, url)
	sr.take()

	for _, c := range []struct{ kind, served, other, none string }{
		{"prompt", `{"type":"ref/prompt","name":"a__q"}`, `{"type":"ref/prompt","name":"b__q"}`, `{"type":"ref/prompt","name":"nope__q"}`},
		{"resource template", `{"type":"ref/resource","uri":"demo://a/{id}"}`, `{"type":"ref/resource","uri":"demo://b/{id}"}`, `{"type":"ref/resource","uri":"demo://nope/{id}"}`},
	} {
		if e := complete(prof, ps, c.served); e.rpcError(t) != nil || !strings.Contains(e.body, "from a") {
			t.Errorf("%s the profile serves: %d %q", c.kind, e.status, e.body)
		}
		if got := sr.take(); !slices.Equal(got, []string{"a completion/complete"}) {
			t.Errorf("%s the profile serves: sources asked %q", c.kind, got)
		}
		other, none := complete(prof, ps, c.other), complete(prof, ps, c.none)
		sameError(t, c.kind+" of a server outside the profile, and one that does not exist", other, none, "b", "nope")
		if got := sr.take(); len(got) != 0 {
			t.Errorf("%s outside the profile: sources asked %q", c.kind, got)
		}
		if e := complete(url, ds, c.other); e.rpcError(t) != nil || !strings.Contains(e.body, "from b") {
			t.Errorf("%s on the default endpoint: %d %q", c.kind, e.status, e.body)
		}
		sr.take()
	}
}

// TestProfileSubscriptions: a profile's client cannot subscribe to a
// resource the profile does not serve, whether or not another client
// subscribed first: it is acknowledged, as a subscription to a URI no
// source lists is, and goes nowhere (no source is asked, no update
// reaches it).
func TestProfileSubscriptions(t *testing.T) {
	sr := &sourceRouter{}
	fe, url := profileServer(t, sr)
	prof := url + "/p/p"
	call := func(endpoint, session, method, uri string) exchange {
		return do(t, http.MethodPost, endpoint, `{"jsonrpc":"2.0","id":5,"method":"`+method+`","params":{"uri":"`+uri+`"}}`, legacyHeaders(session))
	}
	ds, ps := initSession(t, url), initSession(t, prof)
	sr.take()

	for _, uri := range []string{"demo://b/doc", "demo://b/7"} {
		nowhere := call(prof, ps, "resources/subscribe", "demo://nope/"+uri[len("demo://b/"):])
		// The same when the profile's client comes first, and after a
		// client of an endpoint that serves it subscribed.
		for _, after := range []bool{false, true} {
			if after {
				if e := call(url, ds, "resources/subscribe", uri); e.rpcError(t) != nil {
					t.Fatalf("subscribe %s on the default endpoint: %q", uri, e.body)
				}
				sr.take()
			}
			e := call(prof, ps, "resources/subscribe", uri)
			if e.status != nowhere.status || e.body != nowhere.body {
				t.Errorf("subscribe %s on the profile (after another client: %v): %d %q; want what a URI no source lists gets: %d %q",
					uri, after, e.status, e.body, nowhere.status, nowhere.body)
			}
			if got := sr.take(); len(got) != 0 {
				t.Errorf("subscribe %s on the profile: sources asked %q", uri, got)
			}
		}
		if got := fe.subscribers(uri); !slices.Equal(got, []string{ds}) {
			t.Errorf("subscribers of %s: %q; want only the default endpoint's session", uri, got)
		}
	}
	// A 2026-07-28 subscriptions/listen stream of the profile is treated
	// the same way (it subscribes through the same path).
	ctx := context.WithValue(t.Context(), profileKey{}, "p")
	if err := fe.subscribe(ctx, "listen:1", "demo://b/doc", quietCall{}); err != nil {
		t.Errorf("a profile's stream, subscribing to a resource the profile does not serve: %v", err)
	}
	if got := fe.subscribers("demo://b/doc"); !slices.Equal(got, []string{ds}) {
		t.Errorf("subscribers of demo://b/doc: %q; want only the default endpoint's session", got)
	}
	// What the profile serves it subscribes to.
	if e := call(prof, ps, "resources/subscribe", "demo://a/doc"); e.rpcError(t) != nil {
		t.Errorf("subscribe to a resource the profile serves: %q", e.body)
	}
	if got := fe.subscribers("demo://a/doc"); !slices.Equal(got, []string{ps}) {
		t.Errorf("subscribers of demo://a/doc: %q", got)
	}
}

// TestUnknownResourcesLookTheSame: on a profile, reading a resource (or a
// URI of a template) of a server outside it is answered exactly as a URI
// that exists nowhere — mcp-go's own answer for a URI it has no handler
// for: -32002 up to 2025-11-25, invalid params and HTTP 400 in 2026-07-28
// — over HTTP in both eras and over stdio, and its source is not asked.
func TestUnknownResourcesLookTheSame(t *testing.T) {
	sr := &sourceRouter{}
	fe, url := profileServer(t, sr)
	prof := url + "/p/p"
	ps := initSession(t, prof)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	read := map[string]func(uri string) exchange{
		"2025-11-25": func(uri string) exchange {
			return do(t, http.MethodPost, prof, `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"`+uri+`"}}`, legacyHeaders(ps))
		},
		"2026-07-28": func(uri string) exchange {
			return do(t, http.MethodPost, prof, `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"`+uri+`",`+meta+`}}`,
				map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": uri})
		},
	}
	stdioFE := New(sr, Options{StdioProfile: "p", Disclosure: fe.Disclosure()})
	stdioFE.Update(fe.Snapshot())
	stdio := serveStdio(t, stdioFE)
	read["stdio"] = func(uri string) exchange {
		stdio.write(t, `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"`+uri+`"}}`)
		return exchange{status: http.StatusOK, body: stdio.answer(t, "6")}
	}
	wantCode := map[string]int64{"2025-11-25": -32002, "2026-07-28": -32602, "stdio": -32002}
	wantStatus := map[string]int{"2025-11-25": 200, "2026-07-28": 400, "stdio": 200}
	sr.take()
	for era, send := range read {
		for _, c := range []struct{ what, outside, nowhere string }{
			{"a resource", "demo://b/doc", "demo://nope/doc"},
			{"a template's URI", "demo://b/7", "demo://nope/7"},
			{"a URI the catch-all cannot match", "demo://b/doc", "demo://no pe/doc"},
		} {
			outside, nowhere := send(c.outside), send(c.nowhere)
			what := era + ", " + c.what + ": outside the profile vs nowhere"
			if strings.ReplaceAll(outside.body, c.outside, "URI") != strings.ReplaceAll(nowhere.body, c.nowhere, "URI") || outside.status != nowhere.status {
				t.Errorf("%s: answered differently:\n%d %q\n%d %q", what, outside.status, outside.body, nowhere.status, nowhere.body)
			}
			if err := outside.rpcError(t); err == nil || err.Code != wantCode[era] || outside.status != wantStatus[era] ||
				err.Message != "handler not found for resource URI '"+c.outside+"': resource not found" {
				t.Errorf("%s: %d %q; want mcp-go's not found (%d, HTTP %d)", what, outside.status, outside.body, wantCode[era], wantStatus[era])
			}
		}
		if e := send("demo://a/doc"); e.rpcError(t) != nil || !strings.Contains(e.body, "from a") {
			t.Errorf("%s: a resource the profile serves: %d %q", era, e.status, e.body)
		}
		if got := sr.take(); !slices.Equal(got, []string{"a resources/read"}) {
			t.Errorf("%s: sources asked %q; want a's once", era, got)
		}
	}
}
