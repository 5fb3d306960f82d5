package catalog

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

func TestFinalName(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct {
		in, want string
	}{
		{"echo", "echo"},
		{"get-user_2", "get-user_2"},
		{"files.read", "files_read"},
		{"fs/read", "fs_read"},
		{"read file", "read_file"},
		{"héllo", "h_llo"},
		{"a🙂b", "a_b"},
		{"日本", "__"},
		{"a\xffb", "a_b"},
		{"", "_"},
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{long, long[:55] + "_" + hash8(long)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := finalName(tt.in)
			if got != tt.want {
				t.Errorf("finalName(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !nameRe.MatchString(got) {
				t.Errorf("finalName(%q) = %q does not match %s", tt.in, got, nameRe)
			}
		})
	}
}

func TestShortening(t *testing.T) {
	prefix := strings.Repeat("p", 64)
	tests := []struct {
		name string
		a, b string // a and b must shorten to different names
	}{
		{"shared 64-char prefix", prefix + "_one", prefix + "_two"},
		{"differ only in a replaced character", prefix + ".x", prefix + "/x"},
		{"differ near the cut", strings.Repeat("q", 60) + "abcdef", strings.Repeat("q", 60) + "abcdeg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := finalName(tt.a), finalName(tt.b)
			if a == b {
				t.Fatalf("%q and %q both shorten to %q", tt.a, tt.b, a)
			}
			for _, n := range []string{a, b} {
				if len(n) != 64 || !nameRe.MatchString(n) {
					t.Errorf("shortened %q: len %d, want a valid 64-char name", n, len(n))
				}
			}
			if !strings.HasPrefix(a, finalName(tt.a[:30])) {
				t.Errorf("%q does not keep the name's prefix", a)
			}
			if again := finalName(tt.a); again != a {
				t.Errorf("not deterministic: %q then %q", a, again)
			}
		})
	}
}

func TestNamespacing(t *testing.T) {
	tests := []struct {
		name      string
		namespace string
		sep       string
		tool      string
		want      string
	}{
		{"no namespace", "", "", "echo", "echo"},
		{"default separator", "gh", "", "search", "gh__search"},
		{"custom separator", "gh", "-", "search", "gh-search"},
		{"invalid namespace chars", "my.server", "", "x", "my_server__x"},
		{"invalid tool chars", "fs", "", "read/file v2", "fs__read_file_v2"},
		{"long", "ns", "", strings.Repeat("t", 80), finalName("ns__" + strings.Repeat("t", 80))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Build([]Source{{ID: "src", Namespace: tt.namespace, Defs: defs(tools(tt.tool))}}, Options{Separator: tt.sep})
			it, ok := s.Tool(tt.want)
			if !ok {
				t.Fatalf("tool %q not found; have %v", tt.want, exposed(s))
			}
			if it.Original != tt.tool || it.Source != "src" {
				t.Errorf("item = %+v, want original %q from src", it, tt.tool)
			}
			checkNames(t, s)
			// A tool name that is not a valid name by itself is reported
			// (the namespace is the operator's, the name the source's).
			var want []Conflict
			if !validName(tt.tool) {
				want = []Conflict{{Kind: Tool, Name: tt.want, Original: tt.tool, Loser: "src", Policy: PolicyPrefix, Resolution: resInvalidName, Renamed: tt.want}}
			}
			if got := s.Conflicts(); !reflect.DeepEqual(got, want) {
				t.Errorf("conflicts = %+v, want %+v", got, want)
			}
		})
	}
}

func TestKindText(t *testing.T) {
	b, err := json.Marshal([]Kind{Tool, Prompt, Resource, ResourceTemplate, 0})
	if err != nil || string(b) != `["tool","prompt","resource","resource_template","source"]` {
		t.Errorf("kinds encode as %s, %v", b, err)
	}
}

// TestExposedNameIsTheBuiltName: what ExposedName predicts is the name the
// catalog serves, short and long (shortened with a hash).
func TestExposedNameIsTheBuiltName(t *testing.T) {
	long := strings.Repeat("p", 60)
	for _, name := range []string{"digest", long} {
		snap := Build([]Source{{ID: "pipelines", Namespace: "pipelines", Executor: "pipelines", Defs: sdk.Definitions{
			Tools: []json.RawMessage{json.RawMessage(`{"name":"` + name + `","inputSchema":{"type":"object"}}`)},
		}}}, Options{})
		want := ExposedName("pipelines", "__", name)
		if _, ok := snap.Tool(want); !ok {
			var got []string
			for _, it := range snap.Tools() {
				got = append(got, it.Name)
			}
			t.Errorf("ExposedName(%q) = %q, the catalog serves %v", name, want, got)
		}
		if len(want) > 64 {
			t.Errorf("ExposedName(%q) = %q, longer than 64", name, want)
		}
	}
}

func TestCountTools(t *testing.T) {
	defs := []json.RawMessage{tool("a"), tool("b"), tool("a"), json.RawMessage(`{"description":"no name"}`), json.RawMessage(`{"name":"bad name!"}`)}
	if n := CountTools(defs); n != 3 {
		t.Errorf("CountTools = %d, want 3 (a, b, bad name!)", n)
	}
}

func TestOwnConflictText(t *testing.T) {
	s := Build([]Source{{ID: "acme-dup", Namespace: "acme-dup", Defs: defs([]json.RawMessage{
		tool("crunch"), tool("crunch"), json.RawMessage(` {"name":"bare"}`),
	})}}, Options{})
	var got []string
	for _, c := range s.Conflicts() {
		if !c.Own() {
			t.Errorf("not the source's own problem: %+v", c)
		}
		got = append(got, c.String())
	}
	want := []string{
		"source acme-dup listed tool crunch twice; the second is dropped: give each tool of the source its own name",
		`source acme-dup: tool bare has no inputSchema, which MCP requires (clients drop such a tool); it is served with {"type":"object"}: give it an inputSchema in the source`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("conflicts:\n%q\nwant\n%q", got, want)
	}
	if it, _ := s.Tool("acme-dup__bare"); string(it.Raw) != ` {"inputSchema":{"type":"object"},"name":"acme-dup__bare"}` {
		t.Errorf("raw = %s", it.Raw)
	}
}
