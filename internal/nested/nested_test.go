package nested

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnter: a gateway under a gateway of another config starts; one
// under a gateway of its own config (however its path is written) does
// not.
func TestEnter(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	link := filepath.Join(dir, "link.yaml")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	top, err := enter(nil, a)
	if err != nil || top != a {
		t.Fatalf("the outermost gateway: %q, %v", top, err)
	}
	under, err := enter(filepath.SplitList(top), b)
	if want := a + string(os.PathListSeparator) + b; err != nil || under != want {
		t.Fatalf("a gateway of another config under it: %q, %v; want %q", under, err, want)
	}
	t.Chdir(dir)
	for _, p := range []string{a, "a.yaml", link} {
		if _, err := enter(filepath.SplitList(under), p); err == nil || !strings.Contains(err.Error(), "same config ("+a+")") {
			t.Errorf("enter(%s) under a gateway of %s = %v, want a refusal", p, a, err)
		}
	}
}

// TestEnterTwice: one process may run a gateway of the same config twice
// (a command run twice in process, as tests do): only the gateways it
// inherited count.
func TestEnterTwice(t *testing.T) {
	t.Setenv(EnvKey, os.Getenv(EnvKey))
	for range 2 {
		if err := Enter("<builtin>"); err != nil {
			t.Fatal(err)
		}
	}
}
