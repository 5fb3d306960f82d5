package skills

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTree writes files (path -> content) under dir; a content starting
// with "->" makes a symlink to the rest, and "+x" at the start marks an
// executable file.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(c, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mode := os.FileMode(0o644)
		if rest, ok := strings.CutPrefix(c, "+x"); ok {
			c, mode = rest, 0o755
		}
		if err := os.WriteFile(full, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func skillMD(name, desc string, extra ...string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n%s---\n# %s\n\nUse it well.\n", name, desc, strings.Join(extra, ""), name)
}

func openLib(t testing.TB, opts Options) *Library {
	t.Helper()
	if opts.Interval == 0 {
		opts.Interval = -1
	}
	opts.NoWatch = true
	l, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// touch bumps a file's mtime so a change is seen even within the file
// system's timestamp granularity.
func touch(t testing.TB, p string) {
	t.Helper()
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
}

func ids(s *Snapshot) []string {
	var out []string
	for _, sk := range s.Skills() {
		out = append(out, sk.ID)
	}
	return out
}
