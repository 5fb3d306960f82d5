package skills

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/toolspec"
)

// A script's variables (the skill's, and what pre hooks set) travel in the
// spec's Environ under names the tool declares, never on the command line
// the executor starts (ps shows it to every user of the machine).
func TestScriptVarsOffTheCommandLine(t *testing.T) {
	r := newRunner(&Library{})
	key := scriptKey{dir: t.TempDir(), entry: "scripts/x.py", runtime: "python"}
	vars := map[string]string{"SKILLGATE_SKILL": "s", "API_TOKEN": "hook-secret-value"}
	raw, err := r.spec(key, Policy{}, vars, "x")
	if err != nil {
		t.Fatal(err)
	}
	var spec toolspec.Spec
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	if argv := strings.Join(spec.Limits.Interpreters["python"], " "); strings.Contains(argv, "hook-secret-value") || strings.Contains(argv, "=") {
		t.Errorf("interpreter command line %q carries variables", argv)
	}
	for k, v := range vars {
		if spec.Environ[k] != v || !strings.Contains(strings.Join(spec.Tool.Env, ","), k) {
			t.Errorf("%s: Environ %q, env names %v; want %q declared and carried", k, spec.Environ[k], spec.Tool.Env, v)
		}
	}
}
