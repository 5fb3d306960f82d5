package childproc

import (
	"slices"
	"testing"
)

// A mark counts as a whole entry's name, wherever the entry is.
func TestEnvironHas(t *testing.T) {
	const prefix = TreeEnvPrefix + "ab12="
	for environ, want := range map[string]bool{
		"":                                        false,
		"SKILLGATE_TREE_ab12=1\x00":               true,
		"PATH=/bin\x00SKILLGATE_TREE_ab12=1\x00":  true,
		"PATH=/bin\x00SKILLGATE_TREE_ab12=1":      true, // no final NUL
		"PATH=/bin\x00SKILLGATE_TREE_ab123=1\x00": false,
		"X=SKILLGATE_TREE_ab12=1\x00":             false, // in a value
		"XSKILLGATE_TREE_ab12=1\x00":              false,
		"SKILLGATE_TREE_ab1=1\x00":                false,
	} {
		if got := environHas([]byte(environ), prefix); got != want {
			t.Errorf("environHas(%q) = %v, want %v", environ, got, want)
		}
	}
}

// Env passes on the marks of the trees this process belongs to, and
// nothing else of its own.
func TestEnvPassesMarks(t *testing.T) {
	t.Setenv(TreeEnvPrefix+"0011223344556677", "1")
	t.Setenv("SKILLGATE_TREE", "not a mark's name")
	env := Env()
	if !slices.Contains(env, TreeEnvPrefix+"0011223344556677=1") {
		t.Errorf("Env() = %q, without this process's mark", env)
	}
	if _, ok := LookupEnv(env, "SKILLGATE_TREE"); ok {
		t.Errorf("Env() = %q, with SKILLGATE_TREE", env)
	}
}
