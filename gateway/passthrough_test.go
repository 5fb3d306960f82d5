package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/jsonscan"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/internal/testenv"
)

// The -update flag rewrites the golden files of this package. It is looked
// up rather than declared blindly so that another test file of the package
// may declare it too.
var _ = func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/golden")
	}
	return true
}()

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// passthroughGolden is the transcript of what richserver sends: for every
// exchange, the params it was asked with and the result it answered, as
// bytes on the wire. -update rewrites it from a direct session with the
// fixture; it never records what the gateway sends.
const passthroughGolden = "testdata/golden/passthrough.txtar"

// Protocol revisions the raw client speaks.
const (
	legacyVersion = "2025-11-25"
	modernVersion = "2026-07-28"
)

// exchange is one request made to richserver directly and through the
// gateway, whose answers are compared.
type exchange struct {
	name   string // golden section
	method string
	params string // in the upstream's own names
	// gwParams are the params a gateway client sends (exposed names);
	// "" means params.
	gwParams string
	// list is the member of a list result holding the items; "" means the
	// whole result is the upstream's and is compared as one.
	list string
	// note explains a failure of this exchange.
	note string
}

var richExchanges = []exchange{
	{name: "tools/list", method: "tools/list", params: `{}`, list: "tools"},
	{name: "resources/list", method: "resources/list", params: `{}`, list: "resources"},
	{name: "resources/templates/list", method: "resources/templates/list", params: `{}`, list: "resourceTemplates"},
	{name: "prompts/list", method: "prompts/list", params: `{}`, list: "prompts"},
	{name: "tools/call rich", method: "tools/call",
		params:   `{"name":"rich","arguments":{"zeta":"a","alpha":{"y":2,"x":1}}}`,
		gwParams: `{"name":"rich__rich","arguments":{"zeta":"a","alpha":{"y":2,"x":1}}}`},
	{name: "tools/call fail text", method: "tools/call",
		params:   `{"name":"fail","arguments":{"kind":"text"}}`,
		gwParams: `{"name":"rich__fail","arguments":{"kind":"text"}}`},
	{name: "tools/call fail structured", method: "tools/call",
		params:   `{"name":"fail","arguments":{"kind":"structured"}}`,
		gwParams: `{"name":"rich__fail","arguments":{"kind":"structured"}}`},
	{name: "tools/call fail empty", method: "tools/call",
		params:   `{"name":"fail","arguments":{"kind":"empty"}}`,
		gwParams: `{"name":"rich__fail","arguments":{"kind":"empty"}}`},
	{name: "tools/call fail meta", method: "tools/call",
		params:   `{"name":"fail","arguments":{"kind":"meta"}}`,
		gwParams: `{"name":"rich__fail","arguments":{"kind":"meta"}}`},
	{name: "tools/call future", method: "tools/call",
		params:   `{"name":"future","arguments":{}}`,
		gwParams: `{"name":"rich__future","arguments":{}}`},
	// The upstream answers with the bytes of the arguments it got: through
	// the gateway, the client's arguments must arrive unchanged.
	{name: "tools/call args", method: "tools/call",
		params:   `{"name":"args","arguments":{"zeta":"a&b<c>","alpha":{"y":2,"x":1.50},"big":12345678901234567890,"e":1e3}}`,
		gwParams: `{"name":"rich__args","arguments":{"zeta":"a&b<c>","alpha":{"y":2,"x":1.50},"big":12345678901234567890,"e":1e3}}`,
		note:     "the result's text is the arguments the upstream received; the client sent {\"zeta\":\"a&b<c>\",\"alpha\":{\"y\":2,\"x\":1.50},\"big\":12345678901234567890,\"e\":1e3}"},
	{name: "prompts/get brief", method: "prompts/get",
		params:   `{"name":"brief","arguments":{"topic":"gateways"}}`,
		gwParams: `{"name":"rich__brief","arguments":{"topic":"gateways"}}`},
	{name: "resources/read readme", method: "resources/read", params: `{"uri":"rich://docs/readme"}`},
	{name: "resources/read item", method: "resources/read", params: `{"uri":"rich://items/7"}`},
}

// TestPassThrough compares what a client sees through the gateway with what
// richserver sent, byte for byte: over streamable HTTP in the 2025-11-25
// era (with a session) and the 2026-07-28 era (stateless), and over the
// stdio front end. The differences allowed are, and only are:
//
//   - Every era: the top-level "name" of a tool or prompt holds its exposed
//     name (rich__rich); its value is replaced in place, nothing else moves.
//     A tool's execution loses taskSupport (and goes when left empty): the
//     gateway serves no tasks.
//     List results are the gateway's own envelopes: their items are compared
//     one by one, each with the upstream's item.
//   - 2026-07-28 only, on results relayed whole (tools/call, prompts/get,
//     resources/read) and on list envelopes, members the revision makes the
//     gateway add when the upstream (which speaks 2025-11-25) did not send
//     them, anywhere in the object:
//     "resultType":"complete", required on every result;
//     "ttlMs" (an integer >= 0) and "cacheScope" ("private" or "public"), the
//     caching hints SEP-2549 requires on list and resources/read results;
//     "io.modelcontextprotocol/serverInfo" inside _meta (servers SHOULD
//     identify themselves in every result; _meta may be created for it).
//     A required one that is missing or malformed fails the test. They are
//     removed, and what is left must equal the upstream's bytes.
//
// Nothing else is allowed: not a reordered key, not a number spelled
// differently (1.50 for 1.5), not a string escaped differently (& as
// \u0026), not a dropped unknown member, not an added empty one.
func TestPassThrough(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")

	upstream := recordUpstream(t, bin, richExchanges)
	checkGolden(t, upstream)

	yaml := "servers:\n  rich:\n    command: " + strconv.Quote(bin) + "\n"
	r := startGateway(t, yaml, nil)
	r.waitReady(t, "rich")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// /readyz can say ready a moment before the front end serves the tools.
	waitTools(t, ctx, newRawClient(t, ctx, r.url+"/mcp", legacyVersion), []string{"rich__rich"}, nil)

	for _, era := range []string{legacyVersion, modernVersion, "stdio"} {
		t.Run(era, func(t *testing.T) {
			var c interface {
				call(ctx context.Context, method, params string) ([]byte, error)
			}
			snap := r.gw.Snapshot()
			if era == "stdio" {
				p, gw := serveStdio(t, ctx, yaml)
				c, snap = p, gw.Snapshot()
			} else {
				c = newRawClient(t, ctx, r.url+"/mcp", era)
			}
			for _, ex := range richExchanges {
				t.Run(ex.name, func(t *testing.T) {
					params := ex.gwParams
					if params == "" {
						params = ex.params
					}
					got, err := c.call(ctx, ex.method, params)
					if err != nil {
						t.Fatalf("through the gateway: %v", err)
					}
					want := upstream[ex.name]
					if ex.note != "" {
						defer func() {
							if t.Failed() {
								t.Log("note: " + ex.note)
							}
						}()
					}
					if ex.list == "" {
						compareWhole(t, era, ex.method, got, want)
						return
					}
					compareList(t, era, ex, snap, got, want)
				})
			}
		})
	}
}

// serveStdio runs a second gateway for yaml on the stdio front end, in
// process, and returns an initialized 2025-11-25 client of it.
func serveStdio(t *testing.T, ctx context.Context, yaml string) (*stdioPeer, *gateway.Gateway) {
	t.Helper()
	p, gw := startStdio(t, yaml)
	if _, err := p.request(ctx, "initialize", `{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"raw-stdio","version":"0"}}`); err != nil {
		t.Fatalf("initialize over stdio: %v", err)
	}
	if err := p.notify("notifications/initialized", ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := p.request(ctx, "tools/list", `{}`)
		if err == nil && bytes.Contains(list, []byte(`"rich__rich"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stdio gateway never listed rich__rich: %s, %v", list, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p, gw
}

// startStdio runs a gateway for yaml on the stdio front end, in process,
// and returns a client of it that has sent nothing yet.
func startStdio(t *testing.T, yaml string) (*stdioPeer, *gateway.Gateway) {
	t.Helper()
	gw, stdin, stdout := stdioPipes(t, yaml)
	return newStdioPeer(stdin, stdout), gw
}

// stdioPipes serves yaml over stdio on pipes until the test ends: the
// client writes the gateway's stdin and reads its stdout. The cleanup
// closes stdin and checks that ServeStdio returns, showing the gateway's
// log if the test failed.
func stdioPipes(t *testing.T, yaml string) (*gateway.Gateway, *io.PipeWriter, *io.PipeReader) {
	t.Helper()
	gw, logs := newLogged(t, "stdio.yaml", yaml)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- gw.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("ServeStdio did not return within 30s of stdin closing")
		}
		if t.Failed() {
			t.Logf("stdio gateway log:\n%s", logs.String())
		}
	})
	return gw, inW, outR
}

// compareWhole compares a result the gateway relays as a whole.
func compareWhole(t *testing.T, era, method string, got, want []byte) {
	t.Helper()
	norm := got
	if era == modernVersion {
		var problems []string
		norm, problems = stripModern(method, got, want)
		for _, p := range problems {
			t.Errorf("%s result: %s\ngot: %s", method, p, got)
		}
	}
	if !bytes.Equal(norm, want) {
		t.Errorf("%s result is not the upstream's\n%s", method, explainDiff(norm, want))
	}
}

// compareList compares the items of a list result with the upstream's
// items, each expected with its exposed name spliced in.
func compareList(t *testing.T, era string, ex exchange, snap *catalog.Snapshot, got, want []byte) {
	t.Helper()
	if era == modernVersion {
		if _, problems := stripModern(ex.method, got, want); len(problems) > 0 {
			for _, p := range problems {
				t.Errorf("%s envelope: %s", ex.method, p)
			}
		}
	}
	gotItems, err := listItems(got, ex.list)
	if err != nil {
		t.Fatalf("gateway's %s result: %v\n%s", ex.method, err, got)
	}
	wantItems, err := listItems(want, ex.list)
	if err != nil {
		t.Fatalf("upstream's %s result: %v\n%s", ex.method, err, want)
	}
	byKey := map[string][]byte{}
	for _, it := range gotItems {
		byKey[itemKey(it)] = it
	}
	for _, up := range wantItems {
		key := itemKey(up)
		exp := up
		if ex.list == "tools" || ex.list == "prompts" {
			exposed := exposedName(snap, ex.list, key)
			if exposed == "" {
				t.Errorf("%s %q is not in the gateway's catalog", ex.list, key)
				continue
			}
			exp = spliceMember(up, "name", strconv.Quote(exposed))
			key = exposed
		}
		if ex.list == "tools" {
			// The gateway serves no tasks (SEP-1686): it runs a tool that
			// requires one to its end, and lists none with taskSupport.
			exp = bytes.Replace(exp, []byte(`"execution":{"taskSupport":"optional"},`), nil, 1)
		}
		t.Run(key, func(t *testing.T) {
			g, ok := byKey[key]
			if !ok {
				t.Fatalf("%s lacks %s; it has %d items:\n%s", ex.method, key, len(gotItems), got)
			}
			if !bytes.Equal(g, exp) {
				t.Errorf("%s item %s is not the upstream's (name aside)\n%s", ex.method, key, explainDiff(g, exp))
			}
		})
	}
}

// exposedName finds the exposed name of a source-"rich" tool or prompt.
func exposedName(snap *catalog.Snapshot, list, original string) string {
	items := snap.Tools()
	if list == "prompts" {
		items = snap.Prompts()
	}
	for _, it := range items {
		if it.Source == "rich" && it.Original == original {
			return it.Name
		}
	}
	return ""
}

// itemKey is what identifies a list item: its URI (template), or its name.
func itemKey(item []byte) string {
	for _, k := range []string{"uri", "uriTemplate", "name"} {
		if v := memberValue(item, k); v != nil {
			var s string
			_ = json.Unmarshal(v, &s)
			return s
		}
	}
	return string(item)
}

// cacheable lists the methods whose 2026-07-28 results must carry the
// caching hints ttlMs and cacheScope (SEP-2549).
var cacheable = []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read", "server/discover"}

// stripModern removes from a modern result of method the members the
// 2026-07-28 revision lets (or makes) the gateway add, when the upstream's
// result (want) lacks them, and reports those that are required but
// missing or malformed.
func stripModern(method string, got, want []byte) ([]byte, []string) {
	var problems []string
	out := got
	type added struct {
		key, why string
		required bool
		valid    func(v []byte) bool
	}
	adds := []added{
		{"resultType", "2026-07-28 requires on every result", true, func(v []byte) bool { return string(v) == `"complete"` }},
		{"ttlMs", "2026-07-28 requires on list and read results (SEP-2549)", slices.Contains(cacheable, method), func(v []byte) bool {
			n, err := strconv.ParseInt(string(v), 10, 64)
			return err == nil && n >= 0
		}},
		{"cacheScope", "2026-07-28 requires on list and read results (SEP-2549)", slices.Contains(cacheable, method), func(v []byte) bool {
			return string(v) == `"private"` || string(v) == `"public"`
		}},
	}
	for _, a := range adds {
		if memberValue(want, a.key) != nil {
			continue // the upstream's own: compared like the rest
		}
		v := memberValue(got, a.key)
		switch {
		case v == nil && a.required:
			problems = append(problems, fmt.Sprintf("lacks %q, which %s", a.key, a.why))
		case v != nil && !a.valid(v):
			problems = append(problems, fmt.Sprintf("%q is %s", a.key, v))
		}
		out = removeMember(out, a.key)
	}
	const serverInfo = "io.modelcontextprotocol/serverInfo"
	if meta := memberValue(out, "_meta"); meta != nil {
		upMeta := memberValue(want, "_meta")
		if upMeta == nil || memberValue(upMeta, serverInfo) == nil {
			meta = removeMember(meta, serverInfo)
		}
		if upMeta == nil && string(meta) == "{}" {
			out = removeMember(out, "_meta")
		} else {
			out = spliceMember(out, "_meta", string(meta))
		}
	}
	return out, problems
}

// listItems returns the raw items of the array member key of a list result.
func listItems(result []byte, key string) ([][]byte, error) {
	v := memberValue(result, key)
	if v == nil {
		return nil, fmt.Errorf("no %q member", key)
	}
	items, ok := arrayElements(v)
	if !ok {
		return nil, fmt.Errorf("%q is not an array", key)
	}
	return items, nil
}

// recordUpstream talks to richserver directly over stdio and returns the
// result bytes of every exchange.
func recordUpstream(t *testing.T, bin string, exchanges []exchange) map[string][]byte {
	t.Helper()
	p := startStdioPeer(t, exec.Command(bin))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.request(ctx, "initialize", `{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"passthrough-test","version":"0"}}`); err != nil {
		t.Fatalf("richserver initialize: %v", err)
	}
	if err := p.notify("notifications/initialized", ""); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, ex := range exchanges {
		res, err := p.request(ctx, ex.method, ex.params)
		if err != nil {
			t.Fatalf("richserver %s: %v", ex.name, err)
		}
		if !json.Valid(res) {
			t.Fatalf("richserver %s: invalid JSON %s", ex.name, res)
		}
		out[ex.name] = res
	}
	p.close(t)
	return out
}

// checkGolden compares the fixture's live answers with the transcript, or
// rewrites the transcript under -update.
func checkGolden(t *testing.T, upstream map[string][]byte) {
	t.Helper()
	var b strings.Builder
	b.WriteString("What gateway/testdata/richserver sends, byte for byte, for each exchange of\n" +
		"TestPassThrough (gateway/passthrough_test.go). A client of the gateway must see\n" +
		"these bytes, except for the differences that test documents. Regenerate with\n" +
		"  go test ./gateway/ -run TestPassThrough -update\n")
	for _, ex := range richExchanges {
		fmt.Fprintf(&b, "-- %s --\nmethod: %s\nparams: %s\nresult: %s\n", ex.name, ex.method, ex.params, upstream[ex.name])
	}
	path := filepath.FromSlash(passthroughGolden)
	if updateGolden() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden transcript: %v (create it with -update)", err)
	}
	if string(have) != b.String() {
		t.Fatalf("richserver no longer sends what %s records; review the change and run with -update\n%s",
			passthroughGolden, explainDiff([]byte(b.String()), have))
	}
}

// goBuild builds the package at pkg (relative to the repository root) into
// the test's temp dir and returns the binary's path.
func goBuild(t *testing.T, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = testenv.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// ---- a raw JSON-RPC client over streamable HTTP ----

// rawClient speaks JSON-RPC over streamable HTTP, keeping every byte of
// what the server answers. In the 2025-11-25 era it opens a session with
// initialize; in the 2026-07-28 era every request stands alone, carrying
// the protocol version, client info and capabilities in _meta and the
// standard Mcp-* headers.
// It is safe for concurrent use.
type rawClient struct {
	url, version, session string

	mu     sync.Mutex
	nextID int
}

func newRawClient(t *testing.T, ctx context.Context, url, version string) *rawClient {
	t.Helper()
	c := &rawClient{url: url, version: version}
	if version == modernVersion {
		res, err := c.call(ctx, "server/discover", `{}`)
		if err != nil {
			t.Fatalf("server/discover: %v", err)
		}
		if !bytes.Contains(res, []byte(modernVersion)) {
			t.Fatalf("server/discover does not offer %s: %s", modernVersion, res)
		}
		return c
	}
	res, hdr, err := c.exchange(ctx, "initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw-test-client","version":"0"}}`, true)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	c.session = hdr.Get("Mcp-Session-Id")
	if c.session == "" {
		t.Fatalf("initialize answered without Mcp-Session-Id: %s", res)
	}
	if err := c.notify(ctx, "notifications/initialized"); err != nil {
		t.Fatalf("notifications/initialized: %v", err)
	}
	return c
}

// call sends one request and returns the raw bytes of its result.
func (c *rawClient) call(ctx context.Context, method, params string) ([]byte, error) {
	res, _, err := c.exchange(ctx, method, params, true)
	return res, err
}

func (c *rawClient) notify(ctx context.Context, method string) error {
	_, _, err := c.exchange(ctx, method, "", false)
	return err
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	status int
	raw    []byte
}

func (e *rpcError) Error() string { return fmt.Sprintf("HTTP %d, JSON-RPC error %s", e.status, e.raw) }

func (c *rawClient) exchange(ctx context.Context, method, params string, isRequest bool) ([]byte, http.Header, error) {
	var body strings.Builder
	body.WriteString(`{"jsonrpc":"2.0",`)
	id := 0
	if isRequest {
		c.mu.Lock()
		c.nextID++
		id = c.nextID
		c.mu.Unlock()
		fmt.Fprintf(&body, `"id":%d,`, id)
	}
	body.WriteString(`"method":` + strconv.Quote(method))
	if c.version == modernVersion && isRequest {
		params = withModernMeta(params)
	}
	if params != "" {
		body.WriteString(`,"params":` + params)
	}
	body.WriteString("}")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body.String()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method != "initialize" {
		req.Header.Set("MCP-Protocol-Version", c.version)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version == modernVersion {
		req.Header.Set("Mcp-Method", method)
		var p struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		}
		_ = json.Unmarshal([]byte(params), &p)
		switch method {
		case "tools/call", "prompts/get":
			req.Header.Set("Mcp-Name", p.Name)
		case "resources/read":
			req.Header.Set("Mcp-Name", p.URI)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if !isRequest {
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode/100 != 2 {
			return nil, nil, fmt.Errorf("%s: HTTP %s", method, resp.Status)
		}
		return nil, resp.Header, nil
	}
	var msgs [][]byte
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		msgs, err = readSSE(resp.Body)
	default:
		var b []byte
		b, err = io.ReadAll(resp.Body)
		if len(bytes.TrimSpace(b)) > 0 {
			msgs = append(msgs, bytes.TrimSpace(b))
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading the answer: %w", method, err)
	}
	for _, m := range msgs {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(m, &r) != nil || string(r.ID) != strconv.Itoa(id) {
			continue
		}
		if r.Error != nil {
			return nil, resp.Header, &rpcError{status: resp.StatusCode, raw: r.Error}
		}
		if r.Result == nil {
			return nil, resp.Header, fmt.Errorf("%s: answer has neither result nor error: %s", method, m)
		}
		return r.Result, resp.Header, nil
	}
	return nil, resp.Header, fmt.Errorf("%s: HTTP %s, no answer with id %d among %d messages: %q", method, resp.Status, id, len(msgs), msgs)
}

// listen opens the session's standalone SSE stream (GET) and sends every
// message on it to the returned channel until ctx ends.
func (c *rawClient) listen(ctx context.Context) (<-chan []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Protocol-Version", c.version)
	req.Header.Set("Mcp-Session-Id", c.session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s, Content-Type %q", c.url, resp.Status, resp.Header.Get("Content-Type"))
	}
	ch := make(chan []byte, 64)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && len(data) > 0:
				select {
				case ch <- []byte(strings.Join(data, "\n")):
				case <-ctx.Done():
					return
				}
				data = nil
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
	}()
	return ch, nil
}

// withModernMeta puts the per-request _meta 2026-07-28 requires first in
// params, leaving the rest of its bytes alone.
func withModernMeta(params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw-test-client","version":"0"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}`
	p := strings.TrimSpace(params)
	if p == "" || p == "{}" {
		return "{" + meta + "}"
	}
	return "{" + meta + "," + p[1:]
}

// readSSE returns the data of every event of an SSE stream.
func readSSE(r io.Reader) ([][]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var msgs [][]byte
	var data []string
	flush := func() {
		if len(data) > 0 {
			msgs = append(msgs, []byte(strings.Join(data, "\n")))
			data = nil
		}
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	flush()
	return msgs, sc.Err()
}

// ---- a raw JSON-RPC peer over stdio ----

// stdioPeer is a line-delimited JSON-RPC client of a process's stdin and
// stdout. It keeps every line the process wrote on stdout.
type stdioPeer struct {
	proc  *testenv.Process // nil when not speaking to a process
	stdin io.WriteCloser

	mu      sync.Mutex
	lines   [][]byte
	waiting map[string]chan []byte
	nextID  int
	eof     chan struct{}
}

// startStdioGateway runs `bin run --stdio -c cfg` (with extra flags) as
// the peer of a stdio client, and returns it with its stderr, which the
// test reads while the gateway runs.
func startStdioGateway(t *testing.T, bin, cfg string, extra ...string) (*stdioPeer, *testenv.Buffer) {
	t.Helper()
	stderr := &testenv.Buffer{}
	cmd := exec.Command(bin, append([]string{"run", "--stdio", "-c", cfg}, extra...)...)
	cmd.Stderr = stderr
	return startStdioPeer(t, cmd), stderr
}

func startStdioPeer(t *testing.T, cmd *exec.Cmd) *stdioPeer {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	proc := testenv.Start(t, cmd)
	p := newStdioPeer(stdin, stdout)
	p.proc = proc
	return p
}

// newStdioPeer speaks to whatever reads stdin and writes stdout.
func newStdioPeer(stdin io.WriteCloser, stdout io.Reader) *stdioPeer {
	p := &stdioPeer{stdin: stdin, waiting: map[string]chan []byte{}, eof: make(chan struct{})}
	go func() {
		defer close(p.eof)
		rd := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := rd.ReadBytes('\n')
			if len(line) > 0 {
				p.received(line)
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

func (p *stdioPeer) received(line []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines = append(p.lines, line)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.ID == nil || m.Method != "" {
		return
	}
	if ch := p.waiting[string(m.ID)]; ch != nil {
		delete(p.waiting, string(m.ID))
		ch <- line
	}
}

// call is request, for the pass-through comparisons.
func (p *stdioPeer) call(ctx context.Context, method, params string) ([]byte, error) {
	return p.request(ctx, method, params)
}

// request sends a request and returns the raw bytes of its result.
func (p *stdioPeer) request(ctx context.Context, method, params string) ([]byte, error) {
	p.mu.Lock()
	p.nextID++
	id := strconv.Itoa(p.nextID)
	ch := make(chan []byte, 1)
	p.waiting[id] = ch
	p.mu.Unlock()
	msg := `{"jsonrpc":"2.0","id":` + id + `,"method":` + strconv.Quote(method)
	if params != "" {
		msg += `,"params":` + params
	}
	if _, err := io.WriteString(p.stdin, msg+"}\n"); err != nil {
		return nil, fmt.Errorf("%s: write: %w", method, err)
	}
	select {
	case line := <-ch:
		var r struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s: %w: %s", method, err, line)
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: JSON-RPC error %s", method, r.Error)
		}
		return r.Result, nil
	case <-p.eof:
		return nil, fmt.Errorf("%s: stdout closed before the answer", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (p *stdioPeer) notify(method, params string) error {
	msg := `{"jsonrpc":"2.0","method":` + strconv.Quote(method)
	if params != "" {
		msg += `,"params":` + params
	}
	_, err := io.WriteString(p.stdin, msg+"}\n")
	return err
}

// stdout returns every line the process wrote on stdout so far.
func (p *stdioPeer) stdout() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.lines)
}

// close closes stdin and waits for the process to exit by itself.
func (p *stdioPeer) close(t *testing.T) error {
	t.Helper()
	_ = p.stdin.Close()
	select {
	case <-p.proc.Done():
		return p.proc.Err()
	case <-time.After(20 * time.Second):
		t.Errorf("process did not exit within 20s of its stdin closing")
		return p.proc.Stop()
	}
}

// ---- raw JSON, walked without re-encoding ----

// member is one member of a JSON object: b[keyStart:valEnd] is `"key":value`.
type member struct {
	key                        string
	keyStart, valStart, valEnd int
}

// The walk itself is internal/jsonscan's (fuzzed against encoding/json).
var (
	skipWS     = jsonscan.SkipSpace
	skipValue  = jsonscan.SkipValue
	skipString = jsonscan.SkipString
)

// objectMembers lists the members of the object b in order; ok is false
// when b is not a valid JSON object.
func objectMembers(b []byte) (ms []member, ok bool) {
	if !json.Valid(b) {
		return nil, false
	}
	i := skipWS(b, 0)
	if b[i] != '{' {
		return nil, false
	}
	i = skipWS(b, i+1)
	for b[i] != '}' {
		ke := skipString(b, i)
		var key string
		_ = json.Unmarshal(b[i:ke], &key)
		vs := skipWS(b, skipWS(b, ke)+1)
		ve := skipValue(b, vs)
		ms = append(ms, member{key: key, keyStart: i, valStart: vs, valEnd: ve})
		i = skipWS(b, ve)
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	return ms, true
}

// arrayElements lists the elements of the array b.
func arrayElements(b []byte) ([][]byte, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	i := skipWS(b, 0)
	if b[i] != '[' {
		return nil, false
	}
	var out [][]byte
	i = skipWS(b, i+1)
	for b[i] != ']' {
		e := skipValue(b, i)
		out = append(out, b[i:e])
		i = skipWS(b, e)
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	return out, true
}

// memberValue returns the raw value of the last member key of object b,
// or nil.
func memberValue(b []byte, key string) []byte {
	ms, _ := objectMembers(b)
	var v []byte
	for _, m := range ms {
		if m.key == key {
			v = b[m.valStart:m.valEnd]
		}
	}
	return v
}

// spliceMember returns a copy of object b with the value of every member
// key replaced by val; every other byte stays where it was.
func spliceMember(b []byte, key, val string) []byte {
	ms, _ := objectMembers(b)
	var out []byte
	prev := 0
	for _, m := range ms {
		if m.key == key {
			out = append(append(out, b[prev:m.valStart]...), val...)
			prev = m.valEnd
		}
	}
	return append(out, b[prev:]...)
}

// removeMember returns object b without its members key. When there is
// nothing to remove, b is returned unchanged.
func removeMember(b []byte, key string) []byte {
	ms, ok := objectMembers(b)
	if !ok || !slices.ContainsFunc(ms, func(m member) bool { return m.key == key }) {
		return b
	}
	out := []byte{'{'}
	first := true
	for _, m := range ms {
		if m.key == key {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, b[m.keyStart:m.valEnd]...)
	}
	return append(out, '}')
}

// explainDiff describes how got differs from want: every structural
// difference by JSON path, then the first differing byte, then both texts.
func explainDiff(got, want []byte) string {
	var b strings.Builder
	var notes []string
	if json.Valid(got) && json.Valid(want) {
		notes = jsonDiff("$", got, want, nil)
	}
	if len(notes) == 0 {
		b.WriteString("  (no structural difference: only bytes between values differ)\n")
	}
	for _, n := range notes {
		b.WriteString("  " + n + "\n")
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	ctx := func(s []byte) string {
		lo, hi := max(0, i-40), min(len(s), i+40)
		return fmt.Sprintf("...%s...", s[lo:hi])
	}
	fmt.Fprintf(&b, "  first differing byte at offset %d:\n    got  %s\n    want %s\n", i, ctx(got), ctx(want))
	fmt.Fprintf(&b, "  got  (%d bytes): %s\n  want (%d bytes): %s", len(got), got, len(want), want)
	return b.String()
}

// jsonDiff compares two valid JSON values without re-encoding them and
// returns one line per difference.
func jsonDiff(path string, got, want []byte, notes []string) []string {
	got, want = bytes.TrimSpace(got), bytes.TrimSpace(want)
	if bytes.Equal(got, want) {
		return notes
	}
	gk, wk := got[0], want[0]
	switch {
	case gk == '{' && wk == '{':
		gm, _ := objectMembers(got)
		wm, _ := objectMembers(want)
		gv := map[string][]byte{}
		var gkeys, wkeys []string
		for _, m := range gm {
			gv[m.key] = got[m.valStart:m.valEnd]
			gkeys = append(gkeys, m.key)
		}
		wv := map[string][]byte{}
		for _, m := range wm {
			wv[m.key] = want[m.valStart:m.valEnd]
			wkeys = append(wkeys, m.key)
			if _, ok := gv[m.key]; !ok {
				notes = append(notes, fmt.Sprintf("%s: dropped (upstream: %s)", path+"."+m.key, want[m.valStart:m.valEnd]))
			}
		}
		for _, m := range gm {
			if _, ok := wv[m.key]; !ok {
				notes = append(notes, fmt.Sprintf("%s: added %s", path+"."+m.key, got[m.valStart:m.valEnd]))
			}
		}
		common := func(keys []string, other map[string][]byte) []string {
			var out []string
			for _, k := range keys {
				if _, ok := other[k]; ok {
					out = append(out, k)
				}
			}
			return out
		}
		if gc, wc := common(gkeys, wv), common(wkeys, gv); !slices.Equal(gc, wc) {
			notes = append(notes, fmt.Sprintf("%s: keys reordered: %v, upstream %v", path, gc, wc))
		}
		for _, k := range wkeys {
			if g, ok := gv[k]; ok {
				notes = jsonDiff(path+"."+k, g, wv[k], notes)
			}
		}
	case gk == '[' && wk == '[':
		ge, _ := arrayElements(got)
		we, _ := arrayElements(want)
		if len(ge) != len(we) {
			notes = append(notes, fmt.Sprintf("%s: %d elements, upstream %d", path, len(ge), len(we)))
		}
		for i := range min(len(ge), len(we)) {
			notes = jsonDiff(fmt.Sprintf("%s[%d]", path, i), ge[i], we[i], notes)
		}
	default:
		var g, w any
		_ = json.Unmarshal(got, &g)
		_ = json.Unmarshal(want, &w)
		what := "changed"
		if gk == '"' && wk == '"' && g == w {
			what = "same string, escaped differently"
		} else if gk != '"' && wk != '"' && gk != '{' && gk != '[' && g == w {
			what = "same number, spelled differently"
		}
		notes = append(notes, fmt.Sprintf("%s: %s: %s, upstream %s", path, what, got, want))
	}
	return notes
}

// TestPassThroughComparator checks the comparison TestPassThrough relies
// on: the allowed differences are removed, and nothing else is forgiven.
func TestPassThroughComparator(t *testing.T) {
	up := `{"content":[{"type":"text","text":"a&b"}],"_meta":{"k":1.50},"isError":false}`
	strip := []struct {
		name, method, got string
		equal             bool
		problems          int
	}{
		{"additions anywhere", "tools/call",
			`{"resultType":"complete","content":[{"type":"text","text":"a&b"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"g"},"k":1.50},"isError":false}`, true, 0},
		{"missing resultType", "tools/call", up, true, 1},
		{"wrong resultType", "tools/call", `{"resultType":"input_required","content":[{"type":"text","text":"a&b"}],"_meta":{"k":1.50},"isError":false}`, true, 1},
		{"read without cache hints", "resources/read", `{"resultType":"complete","content":[{"type":"text","text":"a&b"}],"_meta":{"k":1.50},"isError":false}`, true, 2},
		{"reordered", "tools/call", `{"resultType":"complete","_meta":{"k":1.50},"content":[{"type":"text","text":"a&b"}],"isError":false}`, false, 0},
		{"respelled", "tools/call", `{"resultType":"complete","content":[{"type":"text","text":"a\u0026b"}],"_meta":{"k":1.5},"isError":false}`, false, 0},
		{"dropped", "tools/call", `{"resultType":"complete","content":[{"type":"text","text":"a&b"}],"_meta":{"k":1.50}}`, false, 0},
	}
	for _, c := range strip {
		t.Run(c.name, func(t *testing.T) {
			norm, problems := stripModern(c.method, []byte(c.got), []byte(up))
			if bytes.Equal(norm, []byte(up)) != c.equal || len(problems) != c.problems {
				t.Errorf("stripModern = %s, %q; want equal %v with %d problems", norm, problems, c.equal, c.problems)
			}
		})
	}
	diff := strings.Join(jsonDiff("$", []byte(`{"b":[1.5,"a\u0026b"],"a":1}`), []byte(`{"a":1,"b":[1.50,"a&b"],"c":true}`), nil), "\n")
	for _, want := range []string{"$.c: dropped", "keys reordered: [b a], upstream [a b]", "$.b[0]: same number, spelled differently", "$.b[1]: same string, escaped differently"} {
		if !strings.Contains(diff, want) {
			t.Errorf("jsonDiff lacks %q:\n%s", want, diff)
		}
	}
	if got := spliceMember([]byte(`{"x":1, "name" : "a","y":2}`), "name", `"ns__a"`); string(got) != `{"x":1, "name" : "ns__a","y":2}` {
		t.Errorf("spliceMember = %s", got)
	}
}
