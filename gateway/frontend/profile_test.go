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
// subscribed first; it is refused as reading the resource is, and gets
// none of its updates.
func TestProfileSubscriptions(t *testing.T) {
	sr := &sourceRouter{}
	fe, url := profileServer(t, sr)
	prof := url + "/p/p"
	call := func(endpoint, session, method, uri string) exchange {
		return do(t, http.MethodPost, endpoint, `{"jsonrpc":"2.0","id":5,"method":"`+method+`","params":{"uri":"`+uri+`"}}`, legacyHeaders(session))
	}
	ds, ps := initSession(t, url), initSession(t, prof)

	for _, uri := range []string{"demo://b/doc", "demo://b/7"} {
		read := call(prof, ps, "resources/read", uri)
		wantMsg := read.rpcError(t)
		if wantMsg == nil {
			t.Fatalf("%s read on the profile: %q", uri, read.body)
		}
		// Refused when the profile's client comes first, and after a
		// client of an endpoint that serves it subscribed.
		for _, after := range []bool{false, true} {
			if after {
				if e := call(url, ds, "resources/subscribe", uri); e.rpcError(t) != nil {
					t.Fatalf("subscribe %s on the default endpoint: %q", uri, e.body)
				}
			}
			e := call(prof, ps, "resources/subscribe", uri)
			if err := e.rpcError(t); err == nil || err.Message != wantMsg.Message {
				t.Errorf("subscribe %s on the profile (after another client: %v): %q; want refused as reading it is (%q)", uri, after, e.body, wantMsg.Message)
			}
		}
		if got := fe.subscribers(uri); !slices.Equal(got, []string{ds}) {
			t.Errorf("subscribers of %s: %q; want only the default endpoint's session", uri, got)
		}
	}
	// A 2026-07-28 subscriptions/listen stream of the profile is refused
	// the same way (it subscribes through the same path).
	ctx := context.WithValue(t.Context(), profileKey{}, "p")
	if err := fe.subscribe(ctx, "listen:1", "demo://b/doc"); err == nil {
		t.Error("a profile's stream subscribed to a resource the profile does not serve")
	}
	// What the profile serves it subscribes to.
	if e := call(prof, ps, "resources/subscribe", "demo://a/doc"); e.rpcError(t) != nil {
		t.Errorf("subscribe to a resource the profile serves: %q", e.body)
	}
	if got := fe.subscribers("demo://a/doc"); !slices.Equal(got, []string{ps}) {
		t.Errorf("subscribers of demo://a/doc: %q", got)
	}
}

// TestUnknownToolsLookTheSame: on a profile, a tool of a server outside
// it is refused exactly as a tool that exists nowhere, which is how the
// default endpoint refuses an unknown tool (invalid params: -32602, HTTP
// 400 in 2026-07-28), in both eras and on both paths (the front end's own
// and mcp-go's). Prompts likewise.
func TestUnknownToolsLookTheSame(t *testing.T) {
	fe, url := profileServer(t, &sourceRouter{})
	prof := url + "/p/p"
	ps, ds := initSession(t, prof), initSession(t, url)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	legacy := func(endpoint, session, method, name string) exchange {
		return do(t, http.MethodPost, endpoint, `{"jsonrpc":"2.0","id":8,"method":"`+method+`","params":{"name":"`+name+`"}}`, legacyHeaders(session))
	}
	modern := func(endpoint, _, method, name string) exchange {
		return do(t, http.MethodPost, endpoint, `{"jsonrpc":"2.0","id":8,"method":"`+method+`","params":{"name":"`+name+`",`+meta+`}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name})
	}
	check := func(t *testing.T, era string, send func(endpoint, session, method, name string) exchange) {
		for _, c := range []struct{ method, name string }{{"tools/call", "t"}, {"prompts/get", "q"}} {
			elsewhere := send(prof, ps, c.method, "b__"+c.name)
			nowhere := send(prof, ps, c.method, "nope__"+c.name)
			onDefault := send(url, ds, c.method, "nope__"+c.name)
			sameError(t, era+" "+c.method+": outside the profile vs nowhere", elsewhere, nowhere, "b__"+c.name, "nope__"+c.name)
			sameError(t, era+" "+c.method+": outside the profile vs unknown on the default endpoint", elsewhere, onDefault, "b__"+c.name, "nope__"+c.name)
			if err := elsewhere.rpcError(t); err == nil || err.Code != -32602 {
				t.Errorf("%s %s outside the profile: %d %q; want invalid params (-32602)", era, c.method, elsewhere.status, elsewhere.body)
			}
			if e := send(prof, ps, c.method, "a__"+c.name); e.rpcError(t) != nil {
				t.Errorf("%s %s the profile serves: %q", era, c.method, e.body)
			}
		}
	}
	t.Run("2025-11-25", func(t *testing.T) { check(t, "2025-11-25", legacy) })
	t.Run("2026-07-28", func(t *testing.T) { check(t, "2026-07-28", modern) })
	// A session with a notification pending is served by mcp-go, which
	// still runs the meta-tools on a profile.
	fe.notified.Add(1)
	t.Run("2025-11-25 via mcp-go", func(t *testing.T) { check(t, "2025-11-25 via mcp-go", legacy) })
	if e := do(t, http.MethodPost, prof, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"t"}}}`, legacyHeaders(ps)); e.rpcError(t) != nil || !strings.Contains(e.body, "a__t") || strings.Contains(e.body, "b__t") {
		t.Errorf("find_tools on the profile via mcp-go: %q", e.body)
	}
}

// TestListCursors: the gateway answers lists whole and issues no cursors.
// An empty cursor is the start; any other is refused, on a profile too,
// where mcp-go would otherwise page through every server's items.
func TestListCursors(t *testing.T) {
	_, url := profileServer(t, &sourceRouter{})
	prof := url + "/p/p"
	ps := initSession(t, prof)
	for _, c := range []struct{ method, served, other string }{
		{"resources/list", "demo://a/doc", "demo://b/doc"},
		{"resources/templates/list", "demo://a/{id}", "demo://b/{id}"},
		{"tools/list", "a__t", "b__t"},
		{"prompts/list", "a__q", "b__q"},
	} {
		e := do(t, http.MethodPost, prof, `{"jsonrpc":"2.0","id":4,"method":"`+c.method+`","params":{"cursor":""}}`, legacyHeaders(ps))
		if e.rpcError(t) != nil || !strings.Contains(e.body, c.served) || strings.Contains(e.body, c.other) {
			t.Errorf("%s with an empty cursor on the profile: %q", c.method, e.body)
		}
		e = do(t, http.MethodPost, prof, `{"jsonrpc":"2.0","id":4,"method":"`+c.method+`","params":{"cursor":"MTA="}}`, legacyHeaders(ps))
		if err := e.rpcError(t); err == nil || err.Code != -32602 || strings.Contains(e.body, c.other) {
			t.Errorf("%s with a cursor the gateway did not issue: %d %q", c.method, e.status, e.body)
		}
	}
}

// TestUnknownToolHint: the default endpoint says why a tool is missing
// when the gateway knows (UnknownToolHint); a profile never does, so its
// clients learn nothing of servers outside it.
func TestUnknownToolHint(t *testing.T) {
	fe := New(&sourceRouter{}, Options{
		Disclosure:      disclosure.New(disclosure.Options{Profiles: []disclosure.Profile{{Name: "p", Servers: []string{"a"}}}}),
		UnknownToolHint: func(name string) string { return "hint for " + name },
	})
	fe.Update(catalog.Build([]catalog.Source{{ID: "a", Namespace: "a", Executor: "x", Defs: sdk.Definitions{
		Tools: []json.RawMessage{json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`)},
	}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	call := func(endpoint string) exchange {
		return do(t, http.MethodPost, endpoint, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b__t"}}`, legacyHeaders(initSession(t, endpoint)))
	}
	if e := call(url); e.rpcError(t) == nil || e.rpcError(t).Code != -32602 || !strings.Contains(e.body, "hint for b__t") {
		t.Errorf("default endpoint: %d %q", e.status, e.body)
	}
	if e := call(url + "/p/p"); e.rpcError(t) == nil || strings.Contains(e.body, "hint") {
		t.Errorf("profile: %d %q", e.status, e.body)
	}
}
