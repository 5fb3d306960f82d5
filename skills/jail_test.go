package skills

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jailTree is a skill "a" next to a sibling "ab" (the prefix trick) and a
// secret outside both.
func jailTree(t testing.TB) (*Library, *Skill, string) {
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	writeTree(t, dir, map[string]string{
		"secret.txt":                      "SECRET",
		"skills/ab/SKILL.md":              skillMD("ab", "Sibling."),
		"skills/ab/private.md":            "SIBLING",
		"skills/a/SKILL.md":               skillMD("a", "The skill."),
		"skills/a/references/guide.md":    "# Guide\n",
		"skills/a/references/big.txt":     strings.Repeat("0123456789", 100),
		"skills/a/references/utf8.txt":    "a" + strings.Repeat("é", 60),
		"skills/a/references/inner.md":    "->guide.md",
		"skills/a/up.md":                  "->../ab/private.md",
		"skills/a/abs.md":                 "->" + filepath.Join(dir, "secret.txt"),
		"skills/a/loop":                   "->loop",
		"skills/a/refdir":                 "->references",
		"skills/a/out":                    "->" + dir,
		"skills/a/.env":                   "TOKEN=x",
		"skills/a/references/.hidden.txt": "x",
	})
	l := openLib(t, Options{Dirs: []string{skills}, FileCap: 100})
	sk, err := l.Lookup("a")
	if err != nil {
		t.Fatal(err)
	}
	return l, sk, dir
}

func TestReadFileJail(t *testing.T) {
	l, sk, dir := jailTree(t)
	ok := map[string]string{
		"references/guide.md":   "# Guide\n",
		"./references/guide.md": "# Guide\n",
		"references//guide.md":  "# Guide\n",
		"references/inner.md":   "# Guide\n", // a symlink inside the folder
		"refdir/guide.md":       "# Guide\n",
		"SKILL.md":              skillMD("a", "The skill."),
	}
	for p, want := range ok {
		f, err := l.ReadFile(sk, p, 0)
		if err != nil || string(f.Data) != want {
			t.Errorf("%s: %+v %v", p, f, err)
		}
	}
	attacks := []string{
		"../ab/private.md",
		"../../secret.txt",
		"references/../../ab/private.md",
		"references/../../../secret.txt",
		filepath.Join(dir, "secret.txt"),
		"/etc/passwd",
		`..\ab\private.md`,
		"C:/Windows/win.ini",
		"up.md",  // symlink to the sibling
		"abs.md", // symlink to an absolute path outside
		"out/secret.txt",
		"loop",
		".env",
		"references/.hidden.txt",
		"references",
		"",
		".",
		"nope.md",
		"SKILL.md\x00.txt",
	}
	for _, p := range attacks {
		f, err := l.ReadFile(sk, p, 0)
		if err == nil {
			t.Errorf("%q was served: %q", p, f.Data)
			continue
		}
		if !errors.Is(err, ErrBadPath) && !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: %v (not ErrBadPath)", p, err)
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "SIBLING") {
			t.Errorf("%q: the error leaks content: %v", p, err)
		}
	}
}

func TestReadFileCap(t *testing.T) {
	l, sk, _ := jailTree(t)
	f, err := l.ReadFile(sk, "references/big.txt", 0)
	if err != nil || len(f.Data) != 100 || !f.Truncated || f.Size != 1000 {
		t.Fatalf("%+v %v", f, err)
	}
	f, err = l.ReadFile(sk, "references/big.txt", 950)
	if err != nil || len(f.Data) != 50 || f.Truncated || f.Offset != 950 {
		t.Fatalf("%+v %v", f, err)
	}
	if _, err := l.ReadFile(sk, "references/big.txt", 1000); !errors.Is(err, ErrBadPath) {
		t.Errorf("offset at the end: %v", err)
	}
	// A cut never splits a UTF-8 sequence.
	f, _ = l.ReadFile(sk, "references/utf8.txt", 0)
	if f.Binary || len(f.Data) != 99 || !f.Truncated {
		t.Errorf("utf8 cut: %d bytes, binary %v", len(f.Data), f.Binary)
	}
}

// FuzzReadFileJail: whatever the path, nothing outside the skill folder is
// ever read.
func FuzzReadFileJail(f *testing.F) {
	for _, s := range []string{"references/guide.md", "../ab/private.md", "up.md", "abs.md", "/etc/passwd", "out/secret.txt", "refdir/../../ab/private.md", "a/../../secret.txt"} {
		f.Add(s)
	}
	l, sk, _ := jailTree(f)
	f.Fuzz(func(t *testing.T, p string) {
		file, err := l.ReadFile(sk, p, 0)
		if err != nil {
			return
		}
		d := string(file.Data)
		if strings.Contains(d, "SECRET") || strings.Contains(d, "SIBLING") {
			t.Fatalf("%q escaped the jail: %q", p, d)
		}
		if relProblem(p) != "" {
			t.Fatalf("%q was served although relProblem refuses it", p)
		}
	})
}

func TestRelProblem(t *testing.T) {
	for p, bad := range map[string]bool{
		"a.md": false, "scripts/x.py": false, "./a": false, "a/./b": false,
		"..": true, "a/..": true, "/a": true, `a\b`: true, ".git/config": true, "": true, "./": true,
	} {
		if got := relProblem(p) != ""; got != bad {
			t.Errorf("relProblem(%q) = %v, want bad=%v", p, relProblem(p), bad)
		}
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Skip("no /etc/passwd to aim at")
	}
}
