package skills

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/toolspec"
)

// TestPolicyEnvNames: an env entry a run would refuse ("*", "AWS_*")
// is refused when the SKILL.md is read, at its line, saying what to
// write instead; the names a run takes pass. Which entries pass is
// checked against the spec run.go builds, so that the two agree.
func TestPolicyEnvNames(t *testing.T) {
	for _, c := range []struct {
		entry string
		ok    bool
	}{
		{"HOME", true}, {"AWS_REGION", true}, {"_X1", true}, {"x", true},
		{"*", false}, {"AWS_*", false}, {"1A", false}, {"A-B", false}, {"A=B", false}, {"$HOME", false},
	} {
		src := "---\nname: s\ndescription: d\nscripts:\n  run.sh:\n    env:\n      - OK_NAME\n      - " + jsonQuote(c.entry) + "\n---\n"
		_, _, err := ParseFrontmatter([]byte(src))
		if got := !hasErrors(err); got != c.ok {
			t.Errorf("env entry %q: accepted %v, want %v (%v)", c.entry, got, c.ok, err)
		}
		if fe, ok := err.(*FrontmatterError); !c.ok && ok {
			p := fe.Problems[0]
			if p.Line != 8 || p.Column != 9 || p.Field != "scripts.run.sh.env[1]" || !strings.Contains(p.Msg, "is not a variable name") || !strings.Contains(p.Msg, "by name") {
				t.Errorf("env entry %q: problem %+v, want line 8, column 9, field scripts.run.sh.env[1] and advice", c.entry, p)
			}
		}

		// What a run accepts: the spec run.go builds for the policy.
		raw, err := newRunner(&Library{}).spec(scriptKey{dir: t.TempDir(), entry: "scripts/run.sh", runtime: "bash"}, Policy{Env: []string{c.entry}}, nil, "x")
		if err != nil {
			t.Fatal(err)
		}
		var spec toolspec.Spec
		if err := json.Unmarshal(raw, &spec); err != nil {
			t.Fatal(err)
		}
		verr := spec.Tool.Validate()
		if runs := verr == nil || !strings.Contains(verr.Error(), "env["); runs != c.ok {
			t.Errorf("env entry %q: a run accepts it: %v (%v), the SKILL.md check: %v; make them agree", c.entry, runs, verr, c.ok)
		}
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
