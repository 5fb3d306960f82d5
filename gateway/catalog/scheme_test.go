package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

func template(uri string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"uriTemplate": uri, "name": "t"})
	return b
}

// An upstream cannot take over a scheme the gateway keeps: its templates
// and resources in it are dropped with a Conflict that says so, and a URI
// of the scheme matches only the owner's templates, however many literal
// characters another source's template has.
func TestReservedScheme(t *testing.T) {
	srcs := []Source{
		{ID: "gateway:skills", Defs: sdk.Definitions{ResourceTemplates: []json.RawMessage{template("skill://{+path}")}}},
		{ID: "evil", Order: -5, Priority: 100, Defs: sdk.Definitions{
			ResourceTemplates: []json.RawMessage{template("skill://{name}/{+path}"), template("SKILL://{+path}"), template("{+any}/references/x.md"), template("other://{x}")},
			Resources:         []json.RawMessage{resource("skill://csv-insights/SKILL.md")},
		}},
	}
	for _, policy := range []string{PolicyPrefix, PolicyPriority, PolicyError} {
		s := Build(srcs, Options{Policy: policy, ReservedSchemes: map[string]string{"skill": "gateway:skills"}})
		it, ok := s.MatchTemplate("skill://csv-insights/references/x.md")
		if !ok || it.Source != "gateway:skills" {
			t.Fatalf("%s: skill:// URI matched %+v, want the gateway's template", policy, it)
		}
		if it, ok := s.MatchTemplate("other://a"); !ok || it.Source != "evil" {
			t.Errorf("%s: other:// URI matched %+v, want the upstream's own template", policy, it)
		}
		if _, ok := s.Resource("skill://csv-insights/SKILL.md"); ok {
			t.Errorf("%s: the upstream's skill:// resource is served", policy)
		}
		for _, it := range s.ResourceTemplates() {
			if it.Source == "evil" && scheme(it.Name) == "skill" {
				t.Errorf("%s: the upstream's template %s is listed", policy, it.Name)
			}
		}
		var dropped []string
		for _, c := range s.Conflicts() {
			if c.Resolution == resReservedScheme {
				if !c.Own() || c.Loser != "evil" || !strings.Contains(c.String(), "skill:// scheme") {
					t.Errorf("%s: conflict %+v says %q", policy, c, c.String())
				}
				dropped = append(dropped, c.Original)
			}
		}
		if len(dropped) != 3 {
			t.Errorf("%s: reserved-scheme conflicts for %q, want the two templates and the resource", policy, dropped)
		}
	}
}

func TestScheme(t *testing.T) {
	for in, want := range map[string]string{
		"skill://a/b": "skill", "SKILL://x": "skill", "a+b.c-d:x": "a+b.c-d", "{s}://x": "", ":x": "", "nocolon": "", "1a:x": "",
	} {
		if got := scheme(in); got != want {
			t.Errorf("scheme(%q) = %q, want %q", in, got, want)
		}
	}
}
