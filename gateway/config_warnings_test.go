package gateway_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// TestRunLogsConfigWarnings: a serving gateway logs, once every source had
// its first try and again after each reload, what `validate` and
// `profiles` say of its disclosure rules: a profile's unknown skill and a
// pinned: glob that matches nothing, each at file:line.
func TestRunLogsConfigWarnings(t *testing.T) {
	skillsDir := filepath.Join(testenv.RepoRoot(t), "examples", "skills")
	yaml := func(pinned string) string {
		return fmt.Sprintf("skills: {dirs: [%q]}\npinned: [%q]\nprofiles:\n  ops:\n    skills: [csv-insights, no-such-skill]\n", skillsDir, pinned)
	}
	r := startGateway(t, yaml("nope__*"), nil)
	log := r.log.String()
	for _, want := range []string{
		`profile names an unknown skill`, `test.yaml:5`, `no skill \"no-such-skill\"`,
		`disclosure rule matches nothing`, `test.yaml:2`, `pinned[0]: \"nope__*\" matches no tool`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the start's log lacks %q:\n%s", want, log)
		}
	}

	cfg, err := config.Parse(strings.NewReader(yaml("other__*")), "test.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if log := r.log.String(); !strings.Contains(log, `pinned[0]: \"other__*\" matches no tool`) {
		t.Errorf("the reload's log lacks the new pinned: warning:\n%s", log)
	}
}
