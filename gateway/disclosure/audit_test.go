package disclosure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// auditSnap: the reference servers everything, memory and filesystem
// (their real definitions, from the ranking fixture), the gateway's
// read_artifact (source gateway:skills) and its service tools
// (@services).
func auditSnap(t testing.TB) *catalog.Snapshot {
	t.Helper()
	var entries []struct {
		Server string          `json:"server"`
		Tool   json.RawMessage `json:"tool"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "ranking", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	srcs := []catalog.Source{
		{ID: "gateway:skills", Order: -1, Defs: sdk.Definitions{Tools: []json.RawMessage{
			raw(`{"name":"read_artifact","title":"Read a stored output","description":"Page through the full output of a result that was cut to fit (its artifact handle is in the result).","inputSchema":{"type":"object","properties":{"handle":{"type":"string"}}}}`),
		}}},
		{ID: "everything", Namespace: "everything", Order: 0},
		{ID: "memory", Namespace: "memory", Order: 1},
		{ID: "filesystem", Namespace: "filesystem", Order: 2},
		{ID: "gateway:services", Namespace: "services", Order: 3, Group: "services", Defs: sdk.Definitions{Tools: []json.RawMessage{
			tool("ls", "Every declared service with its state, health, ports on 127.0.0.1 and policy, as last seen; one not seen within docker.health_ttl is asked about again."),
			tool("status", "Ask the engine about services: state, health and the last health check's output, ports, the variables users get.", "names"),
			tool("up", "Start services (all when names is empty) with their dependencies, whatever their policy, and wait until healthy. Image pulls and builds report progress. rebuild builds images with a build context again.", "names", "rebuild"),
			tool("down", "Stop and remove the containers of services (all when names is empty); volumes are kept.", "names"),
			tool("logs", "The last lines a service's container wrote (stdout and stderr).", "name", "tail"),
			tool("rm", "Stop and remove services' containers AND their named volumes: the data is gone.", "names"),
			tool("prune", "Remove skillgate's leftovers, only objects carrying its labels: stopped containers, containers of services no longer declared, unused volumes of services no longer declared.", "volumes", "all_projects", "images"),
		}}},
	}
	for _, e := range entries {
		for i := range srcs {
			if srcs[i].ID == e.Server {
				srcs[i].Defs.Tools = append(srcs[i].Defs.Tools, e.Tool)
			}
		}
	}
	return catalog.Build(srcs, catalog.Options{Reserved: Names})
}

func findNames(t *testing.T, d *Disclosure, snap *catalog.Snapshot, req Request, args string) ([]string, result) {
	t.Helper()
	r := call(t, d, snap, req, FindTools, args, nil)
	var fr FindResult
	if !r.IsError {
		if err := json.Unmarshal(r.Structured, &fr); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, c := range fr.Tools {
		names = append(names, c.Name)
	}
	return names, r
}

// TestFindOffersServers: the gateway's own plumbing does not outrank a
// server's tool that answers the query; the service tools are not offered
// while no service is configured (unless asked for by group); an unknown
// server filter says so and suggests the close names.
func TestFindOffersServers(t *testing.T) {
	snap := auditSnap(t)
	d := New(Options{Mode: ModeProgressive, Pinned: []string{"read_artifact"}, Groups: map[string]string{"services": "Docker services"},
		Servers: []string{"memory", "filesystem"}, IdleGroups: []string{"services"}})
	names, _ := findNames(t, d, snap, Request{}, `{"query":"store a memory"}`)
	if len(names) == 0 || !strings.HasPrefix(names[0], "memory__") || slices.Contains(names, "read_artifact") && slices.Index(names, "read_artifact") < slices.Index(names, "memory__create_entities") {
		t.Errorf(`find "store a memory" ranks %v; want a memory tool first, memory__create_entities above read_artifact (the gateway's own, already listed)`, names)
	}
	names, _ = findNames(t, d, snap, Request{}, `{"query":"remember facts about a person"}`)
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "services__") }) {
		t.Errorf("find offers %v: service tools while no service is configured", names)
	}
	if names, _ = findNames(t, d, snap, Request{}, `{"server":"services"}`); len(names) != 7 {
		t.Errorf(`find {"server":"services"} = %v; want the seven service tools (asked for by name)`, names)
	}
	if names, _ = findNames(t, d, snap, Request{}, `{"limit":50}`); !slices.Contains(names, "services__ls") {
		t.Errorf(`find {} lists %v; an empty query lists every tool, the service tools too`, names)
	}
	_, r := findNames(t, d, snap, Request{}, `{"server":"memroy"}`)
	if !r.IsError || !strings.Contains(r.text(), `unknown server "memroy"`) || !strings.Contains(r.text(), "did you mean memory?") {
		t.Errorf(`find {"server":"memroy"}: %v %s; want an error naming the unknown server and suggesting memory`, r.IsError, r.text())
	}
}

// TestSuggestionsByName: call_tool's suggestions for a misspelt name are
// the names closest to it, not the first of a search; a direct call gets
// the same (ToolRefusal).
func TestSuggestionsByName(t *testing.T) {
	snap := auditSnap(t)
	d := New(Options{Mode: ModeProgressive})
	r := call(t, d, snap, Request{}, CallTool, `{"name":"filesystem__readfile"}`, nil)
	if !r.IsError || !strings.Contains(r.text(), "did you mean filesystem__read_file,") {
		t.Errorf("call_tool filesystem__readfile: %s; want filesystem__read_file suggested first", r.text())
	}
	if got := d.ToolRefusal(snap, Request{}, "memory__read_grap"); !strings.HasPrefix(got, "tool 'memory__read_grap' not found; did you mean memory__read_graph") ||
		!strings.Contains(got, "find_tools searches every tool") {
		t.Errorf("ToolRefusal(memory__read_grap) = %q", got)
	}
	if got := d.ToolRefusal(snap, Request{}, "memory__read_graph"); got != "" {
		t.Errorf("ToolRefusal of a served tool = %q, want none", got)
	}
}

// TestOutsideProfile: on a profile, a tool that exists outside it is named
// as not served there, by call_tool and ToolRefusal alike; a tool whose
// server is not ready is named with the server's state, on an endpoint
// serving that server only.
func TestOutsideProfile(t *testing.T) {
	snap := auditSnap(t)
	d := New(Options{Profiles: []Profile{{Name: "files", Servers: []string{"filesystem"}}},
		ToolPending: func(name string) (string, string) {
			if strings.HasPrefix(name, "notes__") {
				return "notes", `its server "notes" is failed: exit status 1`
			}
			return "", ""
		}})
	files := Request{Profile: "files"}
	r := call(t, d, snap, files, CallTool, `{"name":"memory__read_graph"}`, nil)
	if !r.IsError || !strings.Contains(r.text(), "memory__read_graph' is not served on profile files") || strings.Contains(r.text(), "did you mean") {
		t.Errorf("call_tool of a tool outside the profile: %s", r.text())
	}
	if got := d.ToolRefusal(snap, files, "memory__read_graph"); !strings.Contains(got, "is not served on profile files") {
		t.Errorf("ToolRefusal outside the profile = %q", got)
	}
	r = call(t, d, snap, Request{}, CallTool, `{"name":"notes__list"}`, nil)
	if !r.IsError || !strings.Contains(r.text(), `its server "notes" is failed: exit status 1`) || strings.Contains(r.text(), "did you mean") {
		t.Errorf("call_tool of a failed server's tool: %s", r.text())
	}
	if got := d.ToolRefusal(snap, files, "notes__list"); strings.Contains(got, "notes\" is failed") {
		t.Errorf("profile files was told of server notes it does not serve: %q", got)
	}
}

// TestActivateFailedServer: activating a server that failed says so, with
// its last error, with and without a session.
func TestActivateFailedServer(t *testing.T) {
	snap := auditSnap(t)
	d := New(Options{Mode: ModeProgressive, Servers: []string{"memory", "filesystem", "flaky"},
		ServerPending: func(s string) string {
			if s == "flaky" {
				return "server flaky is failed: exit status 3"
			}
			return ""
		}})
	for _, req := range []Request{{Session: "s1"}, {}} {
		r := call(t, d, snap, req, Activate, `{"targets":["flaky"]}`, nil)
		if r.IsError || !strings.Contains(r.text(), "server flaky is failed: exit status 3") || !strings.Contains(r.text(), "skillgate servers") ||
			strings.Contains(r.text(), "they were listed already") {
			t.Errorf("activate flaky (session %q): %s", req.Session, r.text())
		}
	}
}

// TestStatelessActivateText: without a session, activate's text carries
// the definitions (a host may give the model only the text), names what
// the client asked for (a bundle as @name), and lists nothing as listed.
func TestStatelessActivateText(t *testing.T) {
	snap := auditSnap(t)
	d := New(Options{Mode: ModeProgressive, Bundles: map[string]Bundle{"files": {Include: []string{"filesystem__read_text_file", "filesystem__list_directory"}}}})
	r := call(t, d, snap, Request{}, Activate, `{"targets":["@files"]}`, nil)
	if r.IsError {
		t.Fatal(r.text())
	}
	if !strings.Contains(r.text(), "2 tool(s) of @files are available") {
		t.Errorf("text does not name the bundle: %s", r.text())
	}
	for _, n := range []string{"filesystem__read_text_file", "filesystem__list_directory"} {
		if !strings.Contains(r.text(), `"name":"`+n+`"`) || !strings.Contains(r.text(), `"inputSchema"`) {
			t.Errorf("text lacks the definition of %s: %s", n, r.text())
		}
	}
	var ar ActivateResult
	if err := json.Unmarshal(r.Structured, &ar); err != nil {
		t.Fatal(err)
	}
	if len(ar.Listed) != 0 || len(ar.Available) != 2 || len(ar.Tools) != 2 {
		t.Errorf("structured: listed %v, available %v, %d definitions; want nothing listed, 2 available with definitions", ar.Listed, ar.Available, len(ar.Tools))
	}
}

// TestAdoptKeepsActivations: new rules keep each session's activations
// that they still serve; only the sessions whose list changed are named.
func TestAdoptKeepsActivations(t *testing.T) {
	snap := auditSnap(t)
	rules := func(desc string, deny ...string) *Disclosure {
		return New(Options{Mode: ModeProgressive, Servers: []string{"memory", "filesystem"}, Profiles: []Profile{
			{Name: "files", Description: desc, Servers: []string{"filesystem"}, Deny: deny},
			{Name: "other", Description: desc},
		}})
	}
	old := rules("one")
	for _, c := range []struct {
		req     Request
		targets string
	}{{Request{Session: "a"}, `["memory"]`}, {Request{Session: "b", Profile: "files"}, `["filesystem__read_file","filesystem__edit_file"]`}} {
		if r := call(t, old, snap, c.req, Activate, `{"targets":`+c.targets+`}`, nil); r.IsError {
			t.Fatal(r.text())
		}
	}
	before := map[string]string{
		"a": string(old.ToolsJSON(snap, Request{Session: "a"})),
		"b": string(old.ToolsJSON(snap, Request{Session: "b", Profile: "files"})),
	}
	d := rules("two")
	if changed := d.Adopt(old, snap); len(changed) != 0 {
		t.Errorf("a description changed; sessions told: %v", changed)
	}
	if d.BaseChanged(old, snap) {
		t.Error("a description changed; BaseChanged says the lists did")
	}
	if got := string(d.ToolsJSON(snap, Request{Session: "a"})); got != before["a"] {
		t.Errorf("session a's list changed on reload:\n%s\nwant\n%s", listed(t, []byte(got)), listed(t, []byte(before["a"])))
	}
	if got := string(d.ToolsJSON(snap, Request{Session: "b", Profile: "files"})); got != before["b"] {
		t.Errorf("session b's list changed on reload: %v", listed(t, []byte(got)))
	}
	// Rules that no longer serve one of b's tools drop that one only.
	d2 := rules("two", "*edit_file")
	if changed := d2.Adopt(d, snap); !slices.Equal(changed, []string{"b"}) {
		t.Errorf("a deny dropped one of b's tools; sessions told: %v, want [b]", changed)
	}
	if got := listed(t, d2.ToolsJSON(snap, Request{Session: "b", Profile: "files"})); !slices.Equal(got, []string{"filesystem__read_file"}) {
		t.Errorf("session b lists %v, want [filesystem__read_file]", got)
	}
	if r := call(t, d2, snap, Request{Session: "b", Profile: "files"}, Deactivate, `{"targets":["filesystem__read_file"]}`, nil); r.IsError {
		t.Errorf("deactivating an adopted activation: %s", r.text())
	}
}
