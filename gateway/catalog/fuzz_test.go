package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// FuzzName checks that whatever a source calls its tools and namespaces,
// every exposed name is valid and Build never panics.
func FuzzName(f *testing.F) {
	for _, seed := range [][3]string{
		{"", "", "echo"},
		{"gh", "__", "search"},
		{"my.server", ".", "files/read file"},
		{"ns", "", strings.Repeat("é", 40)},
		{"", "", "a\xffb"},
		{strings.Repeat("n", 70), "", "x"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, namespace, sep, name string) {
		if got := finalName(name); !nameRe.MatchString(got) || got != finalName(name) {
			t.Fatalf("finalName(%q) = %q", name, got)
		}
		opts := Options{Separator: sep, Reserved: []string{name, finalName(name)}}
		for _, policy := range []string{PolicyPrefix, PolicyPriority, PolicyError} {
			opts.Policy = policy
			s := Build([]Source{
				{ID: name, Namespace: namespace, Defs: defs(tools(name, name+"x"))},
				{ID: namespace, Order: 1, Defs: defs(tools(name, namespace))},
				{ID: "z" + name, Order: 1, Namespace: namespace, Defs: defs(tools(name))},
			}, opts)
			checkNames(t, s)
			if !json.Valid(s.ToolsJSON()) {
				t.Fatalf("invalid ToolsJSON %s", s.ToolsJSON())
			}
			for _, it := range s.Tools() {
				if opts.Reserved[0] == it.Name || opts.Reserved[1] == it.Name {
					t.Fatalf("reserved name %q shadowed", it.Name)
				}
			}
		}
	})
}

// FuzzRaw feeds arbitrary bytes as definitions: Build must not panic, and a
// kept tool's Raw must be valid JSON whose name is the exposed name.
func FuzzRaw(f *testing.F) {
	for _, seed := range []string{
		`{"name":"x"}`,
		`{"name":"a\/b","inputSchema":{"properties":{"name":{}}}}`,
		` { "na\u006de" : "x" , "name":"y" } `,
		`{"uri":"file:///a","uriTemplate":"f://{x}"}`,
		`[1,2]`, `"name"`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := sdk.Definitions{
			Tools:             []json.RawMessage{raw},
			Prompts:           []json.RawMessage{raw},
			Resources:         []json.RawMessage{raw},
			ResourceTemplates: []json.RawMessage{raw},
		}
		s := Build([]Source{{ID: "s", Namespace: "n", Defs: d}}, Options{})
		checkNames(t, s)
		for _, it := range append(s.Tools(), s.Prompts()...) {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(it.Raw, &m); err != nil {
				t.Fatalf("raw %q: %v", it.Raw, err)
			}
			var name string
			if err := json.Unmarshal(m["name"], &name); err != nil || name != it.Name {
				t.Fatalf("raw %q has name %q, want %q", it.Raw, name, it.Name)
			}
		}
		for _, b := range [][]byte{s.ToolsJSON(), s.PromptsJSON(), s.ResourcesJSON(), s.ResourceTemplatesJSON()} {
			if !json.Valid(b) {
				t.Fatalf("invalid list JSON %q", b)
			}
		}
		for _, it := range s.ResourceTemplates() {
			s.MatchTemplate(it.Name)
		}
	})
}

// FuzzMatchTemplate checks that matching never panics and that a template
// without expressions matches exactly itself.
func FuzzMatchTemplate(f *testing.F) {
	f.Add("file:///{+path}", "file:///a/b")
	f.Add("x://{a}{b}{/c}{?d}", "x://ab/c?d=1")
	f.Add("{", "{")
	f.Fuzz(func(t *testing.T, tmpl, uri string) {
		ut := compileTemplate(tmpl)
		ok, _ := ut.match(uri, nil)
		if !strings.ContainsAny(tmpl, "{") && ok != (tmpl == uri) {
			t.Fatalf("literal template %q vs %q", tmpl, uri)
		}
	})
}
