package disclosure

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

func tool(name, desc string, params ...string) json.RawMessage {
	props := map[string]any{}
	for _, p := range params {
		props[p] = map[string]string{"type": "string"}
	}
	b, _ := json.Marshal(map[string]any{"name": name, "description": desc, "inputSchema": map[string]any{"type": "object", "properties": props}})
	return b
}

// testSnap: servers everything (4 tools), files (3 tools), and an admin group.
func testSnap(t testing.TB) *catalog.Snapshot {
	t.Helper()
	return catalog.Build([]catalog.Source{
		{ID: "everything", Namespace: "everything", Order: 0, Defs: sdk.Definitions{Tools: []json.RawMessage{
			tool("echo", "Echoes back the input", "message"),
			tool("get-sum", "Returns the sum of two numbers", "a", "b"),
			tool("delete-everything", "Deletes everything"),
			tool("long-running", "Demonstrates a long running operation with progress updates", "duration", "steps"),
		}}},
		{ID: "files", Namespace: "files", Order: 1, Defs: sdk.Definitions{Tools: []json.RawMessage{
			tool("read_text_file", "Read the complete contents of a file as text", "path"),
			tool("write_file", "Create a new file or overwrite an existing file", "path", "content"),
			tool("list_directory", "Get a detailed listing of all files and directories in a path", "path"),
		}}},
		{ID: "gateway:admin", Namespace: "admin", Order: 2, Group: "admin", Defs: sdk.Definitions{Tools: []json.RawMessage{
			tool("servers", "Lists the gateway's servers with their state"),
		}}},
	}, catalog.Options{Reserved: Names})
}

// listed decodes a tools/list array into names.
func listed(t testing.TB, list []byte) []string {
	t.Helper()
	var tools []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(list, &tools); err != nil {
		t.Fatalf("list is not a JSON array of tools: %v\n%s", err, list)
	}
	var out []string
	for _, tl := range tools {
		if !IsMeta(tl.Name) {
			out = append(out, tl.Name)
		}
	}
	if len(tools)-len(out) != len(Names) {
		t.Errorf("list holds %d meta-tools, want %d", len(tools)-len(out), len(Names))
	}
	return out
}

// result is a decoded CallToolResult.
type result struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
}

func (r result) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// recorder is the sdk.Call of a meta-tool call: it records notifications.
type recorder struct {
	mu    sync.Mutex
	notes []string
}

func (r *recorder) Progress(sdk.Progress) error { return nil }
func (r *recorder) Notify(n sdk.Notification) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, n.Method)
	return nil
}
func (r *recorder) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}
func (r *recorder) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}

var _ sdk.Call = (*recorder)(nil)

func call(t testing.TB, d *Disclosure, snap *catalog.Snapshot, req Request, name, args string, rec *recorder) result {
	t.Helper()
	if rec == nil {
		rec = &recorder{}
	}
	invoke := func(_ context.Context, it *catalog.Item, a json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": "ran " + it.Name + " with " + string(a)}}})
	}
	raw, err := d.CallMeta(context.Background(), snap, req, name, json.RawMessage(args), invoke, rec)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: result is not JSON: %v", name, err)
	}
	return r
}

func TestModes(t *testing.T) {
	snap := testSnap(t)
	all := New(Options{})
	if got, want := listed(t, all.ToolsJSON(snap, Request{})), []string{
		"everything__delete-everything", "everything__echo", "everything__get-sum", "everything__long-running",
		"files__list_directory", "files__read_text_file", "files__write_file",
	}; !slices.Equal(got, want) {
		t.Errorf("all mode lists %v, want %v (the admin group hidden)", got, want)
	}
	prog := New(Options{Mode: ModeProgressive, Pinned: []string{"everything__echo", "files__read_*"}})
	if got, want := listed(t, prog.ToolsJSON(snap, Request{Session: "s"})), []string{"everything__echo", "files__read_text_file"}; !slices.Equal(got, want) {
		t.Errorf("progressive mode lists %v, want the pinned %v", got, want)
	}
}

func TestActivateSessions(t *testing.T) {
	snap := testSnap(t)
	d := New(Options{Mode: ModeProgressive, Pinned: []string{"everything__echo"}})
	a, b, c := Request{Session: "a"}, Request{Session: "b"}, Request{Session: "c"}

	rec := &recorder{}
	r := call(t, d, snap, a, Activate, `{"targets":["files"]}`, rec)
	if r.IsError {
		t.Fatalf("activate files: %s", r.text())
	}
	var ar ActivateResult
	if err := json.Unmarshal(r.Structured, &ar); err != nil {
		t.Fatal(err)
	}
	if want := []string{"files__list_directory", "files__read_text_file", "files__write_file"}; !slices.Equal(ar.Listed, want) {
		t.Errorf("activate answered listed %v, want %v", ar.Listed, want)
	}
	if !slices.Equal(rec.notes, []string{"notifications/tools/list_changed"}) {
		t.Errorf("notifications sent to the activating session: %v, want one list_changed", rec.notes)
	}
	if r := call(t, d, snap, b, Activate, `{"targets":["everything__get-sum"]}`, nil); r.IsError {
		t.Fatalf("activate get-sum: %s", r.text())
	}
	for _, tc := range []struct {
		req  Request
		want []string
	}{
		{a, []string{"everything__echo", "files__list_directory", "files__read_text_file", "files__write_file"}},
		{b, []string{"everything__echo", "everything__get-sum"}},
		{c, []string{"everything__echo"}},
		{Request{}, []string{"everything__echo"}},
	} {
		if got := listed(t, d.ToolsJSON(snap, tc.req)); !slices.Equal(got, tc.want) {
			t.Errorf("session %q lists %v, want %v", tc.req.Session, got, tc.want)
		}
	}

	// Deactivating gives back the list; ending the session forgets it.
	if r := call(t, d, snap, a, Deactivate, `{"targets":["files"]}`, nil); r.IsError {
		t.Fatalf("deactivate files: %s", r.text())
	}
	if got := listed(t, d.ToolsJSON(snap, a)); !slices.Equal(got, []string{"everything__echo"}) {
		t.Errorf("after deactivate session a lists %v", got)
	}
	d.EndSession("b")
	if got := listed(t, d.ToolsJSON(snap, b)); !slices.Equal(got, []string{"everything__echo"}) {
		t.Errorf("after its end session b lists %v", got)
	}
}

func TestActivateErrors(t *testing.T) {
	snap := testSnap(t)
	d := New(Options{
		Mode: ModeProgressive, Pinned: []string{"everything__echo"},
		Bundles: map[string]Bundle{
			"loop1": {Include: []string{"@loop2"}},
			"loop2": {Include: []string{"files", "@loop1"}},
			"bad":   {Include: []string{"files", "nosuch"}},
		},
	})
	s := Request{Session: "s"}
	if r := call(t, d, snap, s, Activate, `{"targets":["files__write_file"]}`, nil); r.IsError {
		t.Fatal(r.text())
	}
	for _, tc := range []struct {
		name, tool, args, want string
	}{
		{"unknown name", Activate, `{"targets":["everything","nosuch_server"]}`, `unknown server, tool, skill or bundle "nosuch_server"`},
		{"typo suggests", Activate, `{"targets":["files__read_text"]}`, "did you mean files__read_text_file"},
		{"unknown bundle", Activate, `{"targets":["@nope"]}`, `unknown bundle or group "@nope"`},
		{"bundle cycle", Activate, `{"targets":["@loop1"]}`, "includes itself"},
		{"bad bundle member", Activate, `{"targets":["@bad"]}`, "bundle @bad: unknown"},
		{"twice", Activate, `{"targets":["files__write_file"]}`, "already active"},
		{"deactivate pinned", Deactivate, `{"targets":["everything__echo"]}`, "pinned"},
		{"deactivate inactive", Deactivate, `{"targets":["files"]}`, "server:files is not active"},
		{"meta-tool", Activate, `{"targets":["find_tools"]}`, "meta-tool"},
		{"empty", Activate, `{"targets":[]}`, "targets is required"},
		{"misspelt argument", Activate, `{"target":["files"]}`, `unknown field "target"`},
		{"glob matching nothing", Activate, `{"targets":["zzz*"]}`, "matches no tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := string(d.ToolsJSON(snap, s))
			r := call(t, d, snap, s, tc.tool, tc.args, nil)
			if !r.IsError || !strings.Contains(r.text(), tc.want) {
				t.Errorf("got isError=%v %q, want an error containing %q", r.IsError, r.text(), tc.want)
			}
			if after := string(d.ToolsJSON(snap, s)); after != before {
				t.Errorf("a failed %s changed the list", tc.tool)
			}
		})
	}
	// Half-valid: nothing is applied.
	r := call(t, d, snap, s, Activate, `{"targets":["everything__get-sum","nosuch"]}`, nil)
	if !r.IsError || !strings.Contains(r.text(), "nothing changed") {
		t.Errorf("half-valid activate: %q", r.text())
	}
	if got := listed(t, d.ToolsJSON(snap, s)); slices.Contains(got, "everything__get-sum") {
		t.Errorf("half-valid activate applied its valid part: %v", got)
	}
}

func TestGroupsAndBundles(t *testing.T) {
	snap := testSnap(t)
	d := New(Options{
		Groups:  map[string]string{"admin": "gateway management"},
		Bundles: map[string]Bundle{"ops": {Include: []string{"@admin", "everything__get-sum"}}},
	})
	s := Request{Session: "s"}
	if got := listed(t, d.ToolsJSON(snap, s)); slices.Contains(got, "admin__servers") {
		t.Fatal("the admin group is listed before activation")
	}
	r := call(t, d, snap, s, Activate, `{"targets":["@ops"]}`, nil)
	if r.IsError {
		t.Fatal(r.text())
	}
	if !strings.Contains(r.text(), "Now listed: admin__servers") {
		t.Errorf("activate @ops answered %q, want admin__servers newly listed (get-sum was listed already in all mode)", r.text())
	}
	if got := listed(t, d.ToolsJSON(snap, s)); !slices.Contains(got, "admin__servers") {
		t.Errorf("after @ops: %v", got)
	}
	// A server activation never reveals a group's tools.
	s2 := Request{Session: "s2"}
	if r := call(t, d, snap, s2, Activate, `{"targets":["everything"]}`, nil); !r.IsError || !strings.Contains(r.text(), "already active") && !strings.Contains(r.text(), "no tool entered") {
		// all mode lists everything already: activation changes nothing visible
		_ = r
	}
	if got := listed(t, d.ToolsJSON(snap, s2)); slices.Contains(got, "admin__servers") {
		t.Errorf("activating a server revealed the admin group: %v", got)
	}
}

func TestModernActivate(t *testing.T) {
	snap := testSnap(t)
	d := New(Options{Mode: ModeProgressive})
	before := string(d.ToolsJSON(snap, Request{}))
	r := call(t, d, snap, Request{}, Activate, `{"targets":["files"]}`, nil)
	if r.IsError {
		t.Fatal(r.text())
	}
	var ar ActivateResult
	if err := json.Unmarshal(r.Structured, &ar); err != nil {
		t.Fatal(err)
	}
	if len(ar.Tools) != 3 || !strings.Contains(string(ar.Tools[0]), `"inputSchema"`) {
		t.Errorf("stateless activate returned %d definitions, want 3 with schemas: %s", len(ar.Tools), r.Structured)
	}
	if after := string(d.ToolsJSON(snap, Request{})); after != before {
		t.Error("stateless activate changed the endpoint's list")
	}
	if d.Sessions() != 0 {
		t.Errorf("stateless activate kept %d sessions", d.Sessions())
	}
	if r := call(t, d, snap, Request{}, Deactivate, `{"targets":["files"]}`, nil); !r.IsError {
		t.Errorf("stateless deactivate succeeded: %s", r.text())
	}
}

func TestProfiles(t *testing.T) {
	snap := testSnap(t)
	d := New(Options{Profiles: []Profile{
		{Name: "readonly", Servers: []string{"everything", "files"}, Deny: []string{"*delete*", "*write*"}},
		{Name: "globs", Tools: []string{"files__*", "everything__echo"}, Allow: []string{"*__list_*", "everything__*"}},
		{Name: "tiny", Mode: ModeProgressive, Servers: []string{"files"}, Pinned: []string{"files__list_directory"}},
	}})
	for _, tc := range []struct {
		profile string
		want    []string
	}{
		{"readonly", []string{"everything__echo", "everything__get-sum", "everything__long-running", "files__list_directory", "files__read_text_file"}},
		{"globs", []string{"everything__echo", "files__list_directory"}},
		{"tiny", []string{"files__list_directory"}},
	} {
		if got := listed(t, d.ToolsJSON(snap, Request{Profile: tc.profile})); !slices.Equal(got, tc.want) {
			t.Errorf("profile %s lists %v, want %v", tc.profile, got, tc.want)
		}
	}
	// What a profile does not serve cannot be found, described, activated or called.
	ro := Request{Profile: "readonly", Session: "x"}
	if r := call(t, d, snap, ro, CallTool, `{"name":"files__write_file","arguments":{}}`, nil); !r.IsError {
		t.Errorf("call_tool of a denied tool succeeded: %s", r.text())
	}
	if r := call(t, d, snap, ro, DescribeTools, `{"names":["everything__delete-everything"]}`, nil); !r.IsError {
		t.Errorf("describe of a denied tool succeeded")
	}
	if r := call(t, d, snap, ro, Activate, `{"targets":["files__write_file"]}`, nil); !r.IsError || !strings.Contains(r.text(), "not available on profile readonly") {
		t.Errorf("activate of a denied tool: %q", r.text())
	}
	var fr FindResult
	r := call(t, d, snap, ro, FindTools, `{"query":"write file"}`, nil)
	_ = json.Unmarshal(r.Structured, &fr)
	for _, c := range fr.Tools {
		if c.Name == "files__write_file" {
			t.Errorf("find_tools on readonly found a denied tool")
		}
	}
	// tiny: activation within the profile works.
	tiny := Request{Profile: "tiny", Session: "y"}
	if r := call(t, d, snap, tiny, Activate, `{"targets":["files__read_text_file"]}`, nil); r.IsError {
		t.Fatal(r.text())
	}
	if got := listed(t, d.ToolsJSON(snap, tiny)); !slices.Equal(got, []string{"files__list_directory", "files__read_text_file"}) {
		t.Errorf("tiny after activation lists %v", got)
	}
}

func TestFindAndDescribe(t *testing.T) {
	snap := testSnap(t)
	d := New(Options{Mode: ModeProgressive})
	s := Request{Session: "s"}
	var fr FindResult
	r := call(t, d, snap, s, FindTools, `{"query":"add two numbers","limit":2}`, nil)
	if err := json.Unmarshal(r.Structured, &fr); err != nil || r.IsError {
		t.Fatalf("find: %v %s", err, r.text())
	}
	if len(fr.Tools) == 0 || fr.Tools[0].Name != "everything__get-sum" {
		t.Errorf("find 'add two numbers' ranked %+v first, want everything__get-sum", fr.Tools)
	}
	if strings.Contains(r.text(), "inputSchema") {
		t.Error("find_tools returned schemas")
	}
	// Paging walks every match once.
	var names []string
	cursor := ""
	for range 10 {
		args := `{"query":"file","limit":1`
		if cursor != "" {
			args += `,"cursor":"` + cursor + `"`
		}
		var page FindResult
		_ = json.Unmarshal(call(t, d, snap, s, FindTools, args+"}", nil).Structured, &page)
		for _, c := range page.Tools {
			names = append(names, c.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(names) != 3 || len(slices.Compact(slices.Sorted(slices.Values(names)))) != 3 {
		t.Errorf("paging over 'file' gave %v, want the 3 files tools once each", names)
	}
	if r := call(t, d, snap, s, FindTools, `{"query":"file","cursor":"bogus"}`, nil); !r.IsError {
		t.Error("a bad cursor was accepted")
	}
	if r := call(t, d, snap, s, FindTools, `{"server":"files"}`, nil); !strings.Contains(r.text(), "files__write_file") || strings.Contains(r.text(), "everything__") {
		t.Errorf("find filtered to server files: %q", r.text())
	}

	r = call(t, d, snap, s, DescribeTools, `{"names":["files__write_file","call_tool"]}`, nil)
	var defs []map[string]any
	if err := json.Unmarshal([]byte(r.text()), &defs); err != nil || len(defs) != 2 || defs[0]["inputSchema"] == nil {
		t.Errorf("describe: %v %s", err, r.text())
	}
	if r := call(t, d, snap, s, DescribeTools, `{"names":["nope"]}`, nil); !r.IsError {
		t.Error("describe of an unknown tool succeeded")
	}

	r = call(t, d, snap, s, CallTool, `{"name":"everything__echo","arguments":{"message":"hi"}}`, nil)
	if r.IsError || r.text() != `ran everything__echo with {"message":"hi"}` {
		t.Errorf("call_tool: %q", r.text())
	}
	for _, args := range []string{`{"name":"nope"}`, `{"name":"find_tools"}`, `{"name":"everything__echo","arguments":[1]}`, `{}`} {
		if r := call(t, d, snap, s, CallTool, args, nil); !r.IsError {
			t.Errorf("call_tool %s succeeded", args)
		}
	}
}

func TestTerms(t *testing.T) {
	for in, want := range map[string]string{
		"read_text_file":                "read text fil",
		"getFileInfo":                   "get fil info",
		"HTTPServer listing":            "http server list",
		"Creates issues in repos":       "creat issu repo",
		"creating an issue":             "creat issu",
		"running deleted files":         "run delet fil",
		"queries string statuses":       "query string status",
		"Send a message to the channel": "send messag channel",
	} {
		if got := strings.Join(terms(in), " "); got != want {
			t.Errorf("terms(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	for in, want := range map[string]int{
		``:                            0,
		`{"name":"echo"}`:             6, // {" name ":" echo "}
		`inputSchema`:                 3,
		`a b  c`:                      3,
		`héllo`:                       3,
		`[{"type":"object"},{"x":1}]`: 14, // [{" type ":" object "},{" x ": 1 }]
	} {
		if got := EstimateTokens([]byte(in)); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestStats(t *testing.T) {
	snap := testSnap(t)
	d := New(Options{Mode: ModeProgressive, Profiles: []Profile{{Name: "files", Servers: []string{"files"}, Mode: ModeAll}}})
	st := d.Stats(snap)
	if len(st) != 2 || st[0].Endpoint != "/mcp" || st[1].Endpoint != "/mcp/p/files" {
		t.Fatalf("stats: %+v", st)
	}
	if st[0].Listed != len(Names) || st[0].Served != 7 || st[0].Tokens != EstimateTokens(d.ToolsJSON(snap, Request{})) {
		t.Errorf("default endpoint stats: %+v", st[0])
	}
	if st[1].Listed != len(Names)+3 || st[1].Served != 3 {
		t.Errorf("files profile stats: %+v", st[1])
	}
	if st[0].Bytes != len(d.ToolsJSON(snap, Request{})) {
		t.Errorf("stats bytes %d differ from the list's %d", st[0].Bytes, len(d.ToolsJSON(snap, Request{})))
	}
}

// A big catalog for benchmarks and the size test.
func bigSnap(tb testing.TB, n int) *catalog.Snapshot {
	tb.Helper()
	verbs := []string{"list", "get", "create", "update", "delete", "search", "send", "read", "write", "run"}
	nouns := []string{"issue", "pull_request", "file", "message", "channel", "user", "pod", "deployment", "table", "query", "event", "invoice", "ticket", "page", "record"}
	var srcs []catalog.Source
	per := 25
	for s := 0; s*per < n; s++ {
		src := catalog.Source{ID: fmt.Sprintf("server%02d", s), Namespace: fmt.Sprintf("server%02d", s), Order: s}
		for i := 0; i < per && s*per+i < n; i++ {
			v, no := verbs[(s+i)%len(verbs)], nouns[(s*7+i)%len(nouns)]
			src.Defs.Tools = append(src.Defs.Tools, tool(fmt.Sprintf("%s_%s_%d", v, no, i),
				fmt.Sprintf("%s a %s in the %02d system. Handles pagination, filtering and sorting of results with optional fields.", v, strings.ReplaceAll(no, "_", " "), s),
				"id", "filter", "limit", "cursor", no))
		}
		srcs = append(srcs, src)
	}
	return catalog.Build(srcs, catalog.Options{Reserved: Names})
}

func TestProgressiveListIsSmall(t *testing.T) {
	snap := bigSnap(t, 1000)
	d := New(Options{Mode: ModeProgressive})
	list := d.ToolsJSON(snap, Request{})
	if tok := EstimateTokens(list); tok > 2000 {
		t.Errorf("progressive tools/list over 1,000 tools is %d tokens, want <= 2000", tok)
	}
	full := New(Options{}).ToolsJSON(snap, Request{})
	t.Logf("1,000-tool catalog: all %d bytes ~%d tokens; progressive %d bytes ~%d tokens",
		len(full), EstimateTokens(full), len(list), EstimateTokens(list))
}

func BenchmarkFind1000(b *testing.B) {
	snap := bigSnap(b, 1000)
	d := New(Options{Mode: ModeProgressive})
	d.index(snap)
	queries := []string{"delete a pod", "send message to channel", "list invoices", "search tickets by user", "update deployment"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		d.Find(snap, Request{}, queries[i%len(queries)], "", 10)
	}
}

func BenchmarkActivate(b *testing.B) {
	snap := bigSnap(b, 1000)
	d := New(Options{Mode: ModeProgressive})
	rec := &recorder{}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req := Request{Session: fmt.Sprint("s", i)}
		if _, err := d.CallMeta(context.Background(), snap, req, Activate, json.RawMessage(`{"targets":["server03"]}`), nil, rec); err != nil {
			b.Fatal(err)
		}
		d.ToolsJSON(snap, req)
		d.EndSession(req.Session)
	}
}
