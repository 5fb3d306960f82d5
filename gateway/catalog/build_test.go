package catalog

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

func TestPolicies(t *testing.T) {
	hashed := withHash("b__x", "b\x00x")
	tests := []struct {
		name      string
		policy    string
		sources   []Source
		want      map[string]string // exposed -> source/original
		conflicts []Conflict
	}{
		{
			name:   "prefix renames the later source",
			policy: "",
			sources: []Source{
				{ID: "a", Order: 0, Defs: defs(tools("x", "y"))},
				{ID: "b", Order: 1, Defs: defs(tools("x"))},
			},
			want: map[string]string{"x": "a/x", "y": "a/y", "b__x": "b/x"},
			conflicts: []Conflict{{Kind: Tool, Name: "x", Winner: "a", Loser: "b", Policy: "prefix",
				Resolution: "renamed to b__x", Renamed: "b__x"}},
		},
		{
			name:   "prefix goes by Order, not by slice position",
			policy: PolicyPrefix,
			sources: []Source{
				{ID: "late", Order: 5, Defs: defs(tools("x"))},
				{ID: "early", Order: 1, Defs: defs(tools("x"))},
			},
			want: map[string]string{"x": "early/x", "late__x": "late/x"},
			conflicts: []Conflict{{Kind: Tool, Name: "x", Winner: "early", Loser: "late", Policy: "prefix",
				Resolution: "renamed to late__x", Renamed: "late__x"}},
		},
		{
			name:   "prefix uses the source ID even with a namespace, and ID breaks Order ties",
			policy: PolicyPrefix,
			sources: []Source{
				{ID: "two", Namespace: "ns", Defs: defs(tools("x"))},
				{ID: "one", Namespace: "ns", Defs: defs(tools("x"))},
			},
			want: map[string]string{"ns__x": "one/x", "two__x": "two/x"},
			conflicts: []Conflict{{Kind: Tool, Name: "ns__x", Winner: "one", Loser: "two", Policy: "prefix",
				Resolution: "renamed to two__x", Renamed: "two__x"}},
		},
		{
			name:   "a rename never takes a name another source asked for",
			policy: PolicyPrefix,
			sources: []Source{
				{ID: "a", Order: 0, Defs: defs(tools("x"))},
				{ID: "b", Order: 1, Defs: defs(tools("x"))},
				{ID: "c", Order: 2, Namespace: "b", Defs: defs(tools("x"))},
			},
			want: map[string]string{"x": "a/x", "b__x": "c/x", hashed: "b/x"},
			conflicts: []Conflict{{Kind: Tool, Name: "x", Winner: "a", Loser: "b", Policy: "prefix",
				Resolution: "renamed to " + hashed, Renamed: hashed}},
		},
		{
			name:   "sanitizing collisions inside one source",
			policy: PolicyPrefix,
			sources: []Source{
				{ID: "fs", Defs: defs(tools("a.b", "a/b"))},
			},
			want: map[string]string{"a_b": "fs/a.b", "fs__a_b": "fs/a/b"},
			conflicts: []Conflict{
				{Kind: Tool, Name: "a_b", Original: "a.b", Loser: "fs", Policy: "prefix", Resolution: resInvalidName, Renamed: "a_b"},
				{Kind: Tool, Name: "a_b", Original: "a/b", Loser: "fs", Policy: "prefix", Resolution: resInvalidName, Renamed: "a_b"},
				{Kind: Tool, Name: "a_b", Winner: "fs", Loser: "fs", Policy: "prefix", Resolution: "renamed to fs__a_b", Renamed: "fs__a_b"},
			},
		},
		{
			name:   "repeated item in one source is dropped",
			policy: PolicyPrefix,
			sources: []Source{
				{ID: "a", Defs: defs(tools("x", "x"))},
			},
			want: map[string]string{"x": "a/x"},
			conflicts: []Conflict{{Kind: Tool, Name: "x", Original: "x", Winner: "a", Loser: "a", Policy: "prefix",
				Resolution: "dropped: duplicate in source"}},
		},
		{
			name:   "priority: higher wins whatever the order",
			policy: PolicyPriority,
			sources: []Source{
				{ID: "a", Order: 0, Priority: 1, Defs: defs(tools("x", "y"))},
				{ID: "b", Order: 1, Priority: 5, Defs: defs(tools("x"))},
			},
			want: map[string]string{"x": "b/x", "y": "a/y"},
			conflicts: []Conflict{{Kind: Tool, Name: "x", Winner: "b", Loser: "a", Policy: "priority",
				Resolution: "dropped: lower priority"}},
		},
		{
			name:   "priority: ties go by Order",
			policy: PolicyPriority,
			sources: []Source{
				{ID: "b", Order: 1, Priority: 2, Defs: defs(tools("x"))},
				{ID: "a", Order: 0, Priority: 2, Defs: defs(tools("x"))},
			},
			want: map[string]string{"x": "a/x"},
			conflicts: []Conflict{{Kind: Tool, Name: "x", Winner: "a", Loser: "b", Policy: "priority",
				Resolution: "dropped: equal priority, listed later"}},
		},
		{
			name:   "error: the later one is dropped and marked",
			policy: PolicyError,
			sources: []Source{
				{ID: "a", Order: 0, Priority: 0, Defs: defs(tools("x"))},
				{ID: "b", Order: 1, Priority: 9, Defs: defs(tools("x"))},
			},
			want: map[string]string{"x": "a/x"},
			conflicts: []Conflict{{Kind: Tool, Name: "x", Winner: "a", Loser: "b", Policy: "error",
				Resolution: "dropped: collision policy is error", Error: true}},
		},
		{
			name:   "unknown policy acts as prefix",
			policy: "bogus",
			sources: []Source{
				{ID: "a", Order: 0, Defs: defs(tools("x"))},
				{ID: "b", Order: 1, Defs: defs(tools("x"))},
			},
			want: map[string]string{"x": "a/x", "b__x": "b/x"},
			conflicts: []Conflict{{Kind: Tool, Name: "x", Winner: "a", Loser: "b", Policy: "prefix",
				Resolution: "renamed to b__x", Renamed: "b__x"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Build(tt.sources, Options{Policy: tt.policy})
			if got := exposed(s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("tools = %v, want %v", got, tt.want)
			}
			if got := s.Conflicts(); !reflect.DeepEqual(got, tt.conflicts) {
				t.Errorf("conflicts =\n%+v\nwant\n%+v", got, tt.conflicts)
			}
			checkNames(t, s)
		})
	}
}

func TestPromptsFollowTheSameRules(t *testing.T) {
	p := func(name string) json.RawMessage { return json.RawMessage(`{"name":"` + name + `","arguments":[]}`) }
	s := Build([]Source{
		{ID: "a", Order: 0, Namespace: "", Defs: sdk.Definitions{Prompts: []json.RawMessage{p("greet")}}},
		{ID: "b", Order: 1, Namespace: "", Defs: sdk.Definitions{Prompts: []json.RawMessage{p("greet")}}},
	}, Options{Reserved: []string{"find"}})
	var got []string
	for _, it := range s.Prompts() {
		got = append(got, it.Name+"="+string(it.Raw))
	}
	want := []string{`b__greet={"name":"b__greet","arguments":[]}`, `greet={"name":"greet","arguments":[]}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prompts = %v, want %v", got, want)
	}
	if it, ok := s.Prompt("b__greet"); !ok || it.Original != "greet" || it.Kind != Prompt {
		t.Errorf("Prompt(b__greet) = %+v, %v", it, ok)
	}
	if _, ok := s.Tool("greet"); ok {
		t.Error("a prompt is found as a tool")
	}
}

func TestReserved(t *testing.T) {
	reserved := []string{"find_tools", "call_tool", "a__call_tool"}
	for _, policy := range []string{PolicyPrefix, PolicyPriority, PolicyError} {
		t.Run(policy, func(t *testing.T) {
			s := Build([]Source{
				{ID: "a", Defs: defs(tools("find_tools", "call_tool"))},
				{ID: "b", Namespace: "find", Order: 1, Defs: defs(tools("tools"))}, // find__tools: not reserved
			}, Options{Policy: policy, Reserved: reserved})
			callHashed := withHash("a__call_tool", "a\x00call_tool")
			want := map[string]string{"a__find_tools": "a/find_tools", callHashed: "a/call_tool", "find__tools": "b/tools"}
			if got := exposed(s); !reflect.DeepEqual(got, want) {
				t.Errorf("tools = %v, want %v", got, want)
			}
			for _, r := range reserved {
				if _, ok := s.Tool(r); ok {
					t.Errorf("reserved name %q is shadowed", r)
				}
			}
			wantC := []Conflict{
				{Kind: Tool, Name: "find_tools", Loser: "a", Policy: policy, Resolution: "renamed: reserved name", Renamed: "a__find_tools"},
				{Kind: Tool, Name: "call_tool", Loser: "a", Policy: policy, Resolution: "renamed: reserved name", Renamed: callHashed},
			}
			if got := s.Conflicts(); !reflect.DeepEqual(got, wantC) {
				t.Errorf("conflicts =\n%+v\nwant\n%+v", got, wantC)
			}
		})
	}
}

func TestSkipped(t *testing.T) {
	bad := []json.RawMessage{
		json.RawMessage(`{"description":"no name"}`),
		json.RawMessage(`{"name":""}`),
		json.RawMessage(`{"name":5}`),
		json.RawMessage(`{"Name":"wrong case"}`),
		json.RawMessage(`["name","x"]`),
		json.RawMessage(`{"name":"x"`),
		json.RawMessage(``),
		nil,
	}
	s := Build([]Source{{ID: "a", Defs: sdk.Definitions{
		Tools:             append(bad, tool("ok")),
		Prompts:           bad,
		Resources:         []json.RawMessage{json.RawMessage(`{"name":"r"}`), json.RawMessage(`{"uri":""}`)},
		ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uri":"x://y"}`)},
	}}}, Options{})
	if len(s.Tools()) != 1 || s.Tools()[0].Name != "ok" {
		t.Errorf("tools = %v, want only ok", exposed(s))
	}
	counts := map[Kind]int{}
	for _, c := range s.Conflicts() {
		if c.Resolution != "skipped: missing name" || !c.Unreadable() || c.Loser != "a" || c.Name != "" {
			t.Errorf("conflict %+v, want a skipped item of a", c)
		}
		counts[c.Kind]++
	}
	want := map[Kind]int{Tool: len(bad), Prompt: len(bad), Resource: 2, ResourceTemplate: 1}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("skipped per kind = %v, want %v", counts, want)
	}
}

func TestResources(t *testing.T) {
	tmpl := json.RawMessage(`{"uriTemplate":"file:///{path}", "name":"files", "zz":true}`)
	srcs := []Source{
		{ID: "a", Order: 0, Priority: 1, Namespace: "na", Defs: sdk.Definitions{
			Resources:         []json.RawMessage{resource("file:///a.txt"), resource("mem://x")},
			ResourceTemplates: []json.RawMessage{tmpl},
		}},
		{ID: "b", Order: 1, Priority: 2, Namespace: "nb", Defs: sdk.Definitions{
			Resources:         []json.RawMessage{resource("mem://x")},
			ResourceTemplates: []json.RawMessage{tmpl},
		}},
	}
	tests := []struct {
		policy     string
		winner     string
		loser      string
		resolution string
	}{
		{PolicyPrefix, "a", "b", "dropped: duplicate URI"},
		{PolicyPriority, "b", "a", "dropped: lower priority"},
		{PolicyError, "a", "b", "dropped: collision policy is error"},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			s := Build(srcs, Options{Policy: tt.policy})
			var uris []string
			for _, r := range s.Resources() {
				uris = append(uris, r.Name)
				if r.Name != r.Original {
					t.Errorf("URI rewritten: %q from %q", r.Name, r.Original)
				}
			}
			if want := []string{"file:///a.txt", "mem://x"}; !reflect.DeepEqual(uris, want) {
				t.Errorf("resources = %v, want %v", uris, want)
			}
			if r, _ := s.Resource("mem://x"); r.Source != tt.winner || !bytes.Equal(r.Raw, resource("mem://x")) {
				t.Errorf("mem://x = %+v, want from %s with raw unchanged", r, tt.winner)
			}
			if len(s.ResourceTemplates()) != 1 || !bytes.Equal(s.ResourceTemplates()[0].Raw, tmpl) {
				t.Errorf("templates = %+v, want one, raw unchanged", s.ResourceTemplates())
			}
			cs := s.Conflicts()
			if len(cs) != 2 {
				t.Fatalf("conflicts = %+v, want 2", cs)
			}
			for i, kind := range []Kind{Resource, ResourceTemplate} {
				c := cs[i]
				if c.Kind != kind || c.Winner != tt.winner || c.Loser != tt.loser || c.Resolution != tt.resolution ||
					c.Error != (tt.policy == PolicyError) {
					t.Errorf("conflict %d = %+v", i, c)
				}
			}
		})
	}
}

func TestRawSplice(t *testing.T) {
	tests := []struct {
		name      string
		namespace string
		raw       string
		want      string
	}{
		{
			name:      "only the top-level name changes",
			namespace: "s",
			raw:       `{"name":"echo","x-unknown":{"deep":[1,2,{"name":"keep"}]},"inputSchema":{"properties":{"name":{"type":"string"}}}}`,
			want:      `{"name":"s__echo","x-unknown":{"deep":[1,2,{"name":"keep"}]},"inputSchema":{"properties":{"name":{"type":"string"}}}}`,
		},
		{
			name:      "whitespace, escapes and key order are kept",
			namespace: "s",
			raw:       "{\n  \"description\": \"caf\\u00e9 \\\"q\\\" <b>\",\n  \"name\" :\t\"echo\" ,\n  \"_meta\": {\"z\": 1, \"a\": [true, null, -1.5e3]}\n}\n",
			want:      "{\n  \"description\": \"caf\\u00e9 \\\"q\\\" <b>\",\n  \"name\" :\t\"s__echo\" ,\n  \"_meta\": {\"z\": 1, \"a\": [true, null, -1.5e3]}\n}\n",
		},
		{
			name:      "escaped key",
			namespace: "s",
			raw:       `{"na\u006de":"echo"}`,
			want:      `{"na\u006de":"s__echo"}`,
		},
		{
			name:      "repeated name key: every one is replaced",
			namespace: "s",
			raw:       `{"name":"first","x":1,"name":"echo"}`,
			want:      `{"name":"s__echo","x":1,"name":"s__echo"}`,
		},
		{
			name:      "escaped name value is decoded, then sanitized",
			namespace: "",
			raw:       `{"name":"a\/b\u00e9"}`,
			want:      `{"name":"a_b_"}`,
		},
		{
			name:      "unchanged name keeps every byte",
			namespace: "",
			raw:       ` {"title":"T", "name" : "echo", "icons":[{"src":"data:,"}]} `,
			want:      ` {"title":"T", "name" : "echo", "icons":[{"src":"data:,"}]} `,
		},
		{
			name:      "strings holding braces and quotes",
			namespace: "s",
			raw:       `{"a":"}{\"name\":\"no\"","b":[{"}":"]"}],"name":"echo","c":"\\"}`,
			want:      `{"a":"}{\"name\":\"no\"","b":[{"}":"]"}],"name":"s__echo","c":"\\"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.raw)
			s := Build([]Source{{ID: "src", Namespace: tt.namespace, Defs: sdk.Definitions{
				Tools:   []json.RawMessage{in},
				Prompts: []json.RawMessage{in},
			}}}, Options{})
			for i, list := range [][]*Item{s.Tools(), s.Prompts()} {
				if len(list) != 1 {
					t.Fatalf("got %d items, want 1", len(list))
				}
				want := tt.want
				if i == 0 && !strings.Contains(tt.raw, `"inputSchema"`) {
					// A tool without one gets an empty inputSchema.
					want = string(withEmptySchema([]byte(want)))
				}
				if got := string(list[0].Raw); got != want {
					t.Errorf("raw =\n%s\nwant\n%s", got, want)
				}
			}
			if string(in) != tt.raw {
				t.Error("Build modified the source's definition")
			}
		})
	}
}

func TestTitleDescription(t *testing.T) {
	s := Build([]Source{{ID: "a", Defs: sdk.Definitions{
		Tools: []json.RawMessage{
			json.RawMessage(`{"name":"t1","title":"Top","description":"D1","annotations":{"title":"Ann"}}`),
			json.RawMessage(`{"name":"t2","annotations":{"title":"Ann"},"description":5}`),
		},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"x://1","name":"res","description":"RD"}`)},
	}}}, Options{})
	t1, _ := s.Tool("t1")
	t2, _ := s.Tool("t2")
	r, _ := s.Resource("x://1")
	got := [][2]string{{t1.Title, t1.Description}, {t2.Title, t2.Description}, {r.Title, r.Description}}
	want := [][2]string{{"Top", "D1"}, {"Ann", ""}, {"res", "RD"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("title/description = %v, want %v", got, want)
	}
}

func TestListJSON(t *testing.T) {
	s := Build([]Source{
		{ID: "b", Order: 1, Executor: "mcp", Namespace: "b", Defs: sdk.Definitions{
			Tools:   []json.RawMessage{json.RawMessage("{\n \"name\": \"zeta\",\n \"x\": [1, 2]\n}"), tool("alpha")},
			Prompts: []json.RawMessage{json.RawMessage(`{"name":"p"}`)},
		}},
		{ID: "a", Order: 0, Executor: "script", Defs: sdk.Definitions{
			Tools:             []json.RawMessage{tool("mid"), json.RawMessage(`{"name":"html","description":"<a&b>"}`)},
			Resources:         []json.RawMessage{resource("z://1"), resource("a://1")},
			ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"t://{x}"}`)},
		}},
	}, Options{})
	lists := []struct {
		name  string
		data  []byte
		items []*Item
	}{
		{"tools", s.ToolsJSON(), s.Tools()},
		{"prompts", s.PromptsJSON(), s.Prompts()},
		{"resources", s.ResourcesJSON(), s.Resources()},
		{"templates", s.ResourceTemplatesJSON(), s.ResourceTemplates()},
	}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			if !json.Valid(l.data) || bytes.ContainsAny(l.data, "\n\r") {
				t.Fatalf("%s JSON %q is not valid one-line JSON", l.name, l.data)
			}
			var arr []json.RawMessage
			if err := json.Unmarshal(l.data, &arr); err != nil {
				t.Fatal(err)
			}
			if len(arr) != len(l.items) {
				t.Fatalf("%d elements, want %d", len(arr), len(l.items))
			}
			for i, it := range l.items {
				var want bytes.Buffer
				_ = json.Compact(&want, it.Raw)
				if !bytes.Equal(arr[i], want.Bytes()) {
					t.Errorf("element %d = %s, want %s", i, arr[i], want.Bytes())
				}
				if i > 0 && l.items[i-1].Name >= it.Name {
					t.Errorf("not ordered by name: %q before %q", l.items[i-1].Name, it.Name)
				}
			}
		})
	}
	if !bytes.Contains(s.ToolsJSON(), []byte(`"<a&b>"`)) {
		t.Errorf("HTML characters were escaped: %s", s.ToolsJSON())
	}
	names := func(items []*Item) (out []string) {
		for _, it := range items {
			out = append(out, it.Name)
		}
		return out
	}
	if got, want := names(s.Tools()), []string{"b__alpha", "b__zeta", "html", "mid"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if got, want := s.Sources(), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sources = %v, want %v", got, want)
	}
	if it, _ := s.Tool("b__zeta"); it.Executor != "mcp" || it.Source != "b" || it.Original != "zeta" || it.Kind != Tool {
		t.Errorf("b__zeta = %+v", it)
	}
	wantMap := []Mapping{
		{"b__alpha", "b", "alpha", Tool}, {"b__zeta", "b", "zeta", Tool}, {"html", "a", "html", Tool}, {"mid", "a", "mid", Tool},
		{"b__p", "b", "p", Prompt},
		{"a://1", "a", "a://1", Resource}, {"z://1", "a", "z://1", Resource},
		{"t://{x}", "a", "t://{x}", ResourceTemplate},
	}
	if got := s.Mapping(); !reflect.DeepEqual(got, wantMap) {
		t.Errorf("mapping =\n%v\nwant\n%v", got, wantMap)
	}

	e := Build(nil, Options{})
	for _, b := range [][]byte{e.ToolsJSON(), e.PromptsJSON(), e.ResourcesJSON(), e.ResourceTemplatesJSON()} {
		if string(b) != "[]" {
			t.Errorf("empty list JSON = %q, want []", b)
		}
	}
}

func TestDeterministic(t *testing.T) {
	srcs := []Source{
		{ID: "a", Order: 0, Priority: 1, Defs: defs(tools("x", "y", "find"))},
		{ID: "b", Order: 1, Priority: 3, Defs: defs(tools("x", "a__x", strings.Repeat("l", 70)))},
		{ID: "c", Order: 1, Priority: 3, Namespace: "b", Defs: defs(tools("x", strings.Repeat("l", 66)))},
		{ID: "d", Order: 2, Defs: sdk.Definitions{Tools: tools("y"), Resources: []json.RawMessage{resource("u://1")}}},
		{ID: "e", Order: 2, Defs: sdk.Definitions{Tools: tools("y"), Resources: []json.RawMessage{resource("u://1")}}},
	}
	for _, policy := range []string{PolicyPrefix, PolicyPriority, PolicyError} {
		opts := Options{Policy: policy, Reserved: []string{"find"}}
		ref := Build(srcs, opts)
		checkNames(t, ref)
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 20; i++ {
			perm := append([]Source(nil), srcs...)
			r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			s := Build(perm, opts)
			if !reflect.DeepEqual(s.Mapping(), ref.Mapping()) || !reflect.DeepEqual(s.Conflicts(), ref.Conflicts()) ||
				!bytes.Equal(s.ToolsJSON(), ref.ToolsJSON()) {
				t.Fatalf("%s: build of %v differs", policy, s.Sources())
			}
		}
	}
}

func TestDuplicateSourceID(t *testing.T) {
	s := Build([]Source{
		{ID: "a", Order: 2, Defs: defs(tools("late"))},
		{ID: "a", Order: 1, Defs: defs(tools("early"))},
	}, Options{})
	if got, want := exposed(s), map[string]string{"early": "a/early"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	want := []Conflict{{Name: "a", Winner: "a", Loser: "a", Policy: "prefix", Resolution: "dropped: duplicate source id"}}
	if !reflect.DeepEqual(s.Conflicts(), want) || !reflect.DeepEqual(s.Sources(), []string{"a"}) {
		t.Errorf("conflicts = %+v, sources = %v", s.Conflicts(), s.Sources())
	}
}

// TestSkillFromMeta: a source with SkillFromMeta gives each item the skill
// its _meta names (its own Skill when it names none); any other source's
// items keep the source's Skill whatever their _meta says.
func TestSkillFromMeta(t *testing.T) {
	d := sdk.Definitions{
		Prompts: []json.RawMessage{
			json.RawMessage(`{"name":"weekly","_meta":{"skillgate/skill":"weekly"}}`),
			json.RawMessage(`{"name":"team_x","_meta":{"other":1,"skillgate/skill":"team/x"}}`),
			json.RawMessage(`{"name":"plain"}`),
			json.RawMessage(`{"name":"odd","_meta":"skillgate/skill"}`),
		},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"skill://weekly/SKILL.md","name":"weekly","_meta":{"skillgate/skill":"weekly"}}`)},
	}
	for _, tc := range []struct {
		name     string
		fromMeta bool
		skill    string
		want     map[string]string
	}{
		{"trusted", true, "", map[string]string{"weekly": "weekly", "team_x": "team/x", "plain": "", "odd": "", "skill://weekly/SKILL.md": "weekly"}},
		{"trusted with a skill", true, "base", map[string]string{"weekly": "weekly", "team_x": "team/x", "plain": "base", "odd": "base", "skill://weekly/SKILL.md": "weekly"}},
		{"upstream", false, "", map[string]string{"weekly": "", "team_x": "", "plain": "", "odd": "", "skill://weekly/SKILL.md": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Build([]Source{{ID: "s", Skill: tc.skill, SkillFromMeta: tc.fromMeta, Defs: d}}, Options{})
			got := map[string]string{}
			for _, it := range append(slices.Clone(s.Prompts()), s.Resources()...) {
				got[it.Name] = it.Skill
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("skills: got %v, want %v", got, tc.want)
			}
		})
	}
}
