package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// TestValidateProfileSkills: `skillgate validate` (ValidateSkills) says,
// at file:line, that a profile names a skill the skills dirs (here the
// bundled examples) do not hold; an existing one is fine.
func TestValidateProfileSkills(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "examples", "skills")
	file := fmt.Sprintf("skills: {dirs: [%q]}\nprofiles:\n  ops:\n    skills: [csv-insights, no-such-skill]\n    tools: [find_skills, load_skill]\n", dir)
	cfg, err := config.Parse(strings.NewReader(file), "f.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	probs, err := ValidateSkills(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range probs {
		if strings.Contains(p.Msg, "profiles.") {
			found = append(found, p.String())
			if p.Warning || p.Path != "f.yaml" || p.Line != 4 || !strings.Contains(p.Msg, `no skill "no-such-skill"`) || !strings.Contains(p.Msg, `"csv-insights"`) {
				t.Errorf("problem %+v, want an error at f.yaml:4 naming no-such-skill and the skills there are", p)
			}
		}
	}
	if len(found) != 1 {
		t.Errorf("profile problems %v, want one, for no-such-skill", found)
	}
}
