package script

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// writeWheel writes a minimal pure-Python wheel (PyPI is not reachable
// here, and a wheel installs without a build backend).
func writeWheel(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	files := map[string]string{
		"sgdemo/__init__.py":                 "def shout(s):\n    return s.upper()\n",
		"sgdemo-1.0.dist-info/METADATA":      "Metadata-Version: 2.1\nName: sgdemo\nVersion: 1.0\n",
		"sgdemo-1.0.dist-info/WHEEL":         "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"sgdemo-1.0.dist-info/top_level.txt": "sgdemo\n",
		"sgdemo-1.0.dist-info/RECORD":        "",
	}
	for name, body := range files {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(body))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
}

func TestPipDependencies(t *testing.T) {
	requireCmd(t, "python3")
	h := newHarness(t)
	dir := folder(t, "name: dep\ndescription: d\nruntime: python\nentry: main.py\ndependencies: {pip: [./sgdemo-1.0-py3-none-any.whl]}\n",
		map[string]string{"main.py": "import sgdemo\nprint(sgdemo.shout('hi'))\n"})
	writeWheel(t, filepath.Join(dir, "sgdemo-1.0-py3-none-any.whl"))
	h.mustLoad("dep", dir, toolspec.Limits{})
	// The first call creates a venv and installs into it: a minute or more
	// on a busy 2-core machine, longer than h.call's bound. Bound it by the
	// install's own timeout instead.
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout+time.Minute)
	defer cancel()
	rec := &sdktest.Recorder{}
	r := h.callCtx(ctx, "dep", "dep", nil, rec)
	if r.IsError || r.text() != "HI" {
		t.Fatalf("result: %s", r.raw)
	}
	if len(rec.Progresses) != 2 || !strings.Contains(rec.Progresses[0].Message, "installing pip packages") {
		t.Errorf("progress: %+v", rec.Progresses)
	}
	// Installed once: the next call reports no install.
	rec = &sdktest.Recorder{}
	if r := h.call("dep", "dep", nil, rec); r.text() != "HI" || len(rec.Progresses) != 0 {
		t.Errorf("second call: %s, progress %+v", r.raw, rec.Progresses)
	}

	bad := folder(t, "name: bad\ndescription: d\nruntime: python\nentry: main.py\ndependencies: {pip: [./missing-pkg]}\n",
		map[string]string{"main.py": ""})
	h.mustLoad("bad", bad, toolspec.Limits{})
	r = h.callCtx(ctx, "bad", "bad", nil, nil) // a venv again, then pip's failure
	if !r.IsError || !strings.Contains(r.text(), "./missing-pkg") {
		t.Fatalf("failed install: %s", r.raw)
	}
}

func TestNpmDependencies(t *testing.T) {
	requireCmd(t, "npm")
	if testing.Short() {
		t.Skip("reaches the npm registry")
	}
	h := newHarness(t)
	dir := folder(t, "name: dep\ndescription: d\nruntime: node\nentry: main.js\ndependencies: {npm: [\"left-pad@1.3.0\"]}\n",
		map[string]string{"main.js": "console.log(require('left-pad')('7', 3, '0'))\n"})
	h.mustLoad("dep", dir, toolspec.Limits{})
	r := h.call("dep", "dep", nil, nil)
	if r.IsError || r.text() != "007" {
		t.Fatalf("result: %s", r.raw)
	}
	bad := folder(t, "name: bad\ndescription: d\nruntime: node\nentry: main.js\ndependencies: {npm: [\"skillgate-no-such-package-zz9\"]}\n",
		map[string]string{"main.js": ""})
	h.mustLoad("bad", bad, toolspec.Limits{})
	r = h.call("bad", "bad", nil, nil)
	if !r.IsError || !strings.Contains(r.text(), "skillgate-no-such-package-zz9") {
		t.Fatalf("failed install: %s", r.raw)
	}
}
