package script

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/plugins/script/internal/proc"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// installTimeout bounds one dependency install.
const installTimeout = 10 * time.Minute

// installed is a tool's installed dependencies.
type installed struct {
	dir         string // the install directory (bound read-only in a sandbox)
	venv        string // a Python venv, or ""
	python      string // the venv's python, or ""
	nodeModules string // a node_modules dir, or ""
}

// dependencies installs the tool's dependencies on first use, reporting
// progress to the call. The install directory is named by a hash of the
// list (and interpreter), so a changed list installs afresh and an
// unchanged one is reused across reloads and restarts. A failure returns
// an error result naming the packages and the installer's own words.
func (t *tool) dependencies(ctx context.Context, call sdk.Call) (*installed, json.RawMessage) {
	d := t.spec.Tool.Dependencies
	if len(d.Pip) == 0 && len(d.Npm) == 0 {
		return nil, nil
	}
	t.depsOnce.Lock()
	defer t.depsOnce.Unlock()
	if t.deps != nil {
		return t.deps, nil
	}
	kind, list := "pip", d.Pip
	if len(d.Npm) > 0 {
		kind, list = "npm", d.Npm
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", kind, strings.Join(t.interp, "\x00"))
	for _, p := range list {
		fmt.Fprintf(h, "%s\x00", p)
	}
	dir := filepath.Join(t.spec.CacheDir, kind+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	inst := &installed{dir: dir}
	if kind == "pip" {
		inst.venv, inst.python = dir, filepath.Join(dir, "bin", "python")
	} else {
		inst.nodeModules = filepath.Join(dir, "node_modules")
	}
	if _, err := os.Stat(filepath.Join(dir, ".skillgate-installed")); err == nil {
		t.deps = inst
		return inst, nil
	}
	_ = call.Progress(sdk.Progress{Progress: 0, Message: fmt.Sprintf("installing %s packages once for this tool: %s", kind, strings.Join(list, ", "))})
	start := time.Now()
	if err := t.install(ctx, kind, list, dir); err != nil {
		return nil, errorResult(statusError, err.Error())
	}
	_ = call.Progress(sdk.Progress{Progress: 1, Total: 1, Message: fmt.Sprintf("installed %s packages in %v", kind, time.Since(start).Round(time.Millisecond))})
	t.e.log.Info("installed dependencies", "source", t.source, "kind", kind, "packages", list, "dir", dir)
	t.deps = inst
	return inst, nil
}

// install installs into a temporary directory and renames it into place,
// so a half-done install is never used.
func (t *tool) install(ctx context.Context, kind string, list []string, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("installing %s packages: %v", kind, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".install-*")
	if err != nil {
		return fmt.Errorf("installing %s packages: %v", kind, err)
	}
	defer os.RemoveAll(tmp)
	_ = os.Chmod(tmp, 0o755)
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	var steps [][]string
	switch kind {
	case "pip":
		if len(t.interp) == 0 {
			return fmt.Errorf("installing pip packages: no python interpreter")
		}
		steps = [][]string{
			{t.interp[0], "-m", "venv", tmp},
			append([]string{filepath.Join(tmp, "bin", "python"), "-m", "pip", "install",
				"--disable-pip-version-check", "--no-input", "--no-warn-script-location"}, list...),
		}
	case "npm":
		if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
			return fmt.Errorf("installing npm packages: %v", err)
		}
		steps = [][]string{append([]string{"npm", "install", "--prefix", tmp, "--no-audit", "--no-fund",
			"--omit=dev", "--no-update-notifier"}, list...)}
	}
	for _, argv := range steps {
		if err := t.runInstaller(ctx, argv); err != nil {
			return fmt.Errorf("installing %s packages %s failed%s: %v", kind, strings.Join(list, ", "), culprit(kind, err.Error()), err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".skillgate-installed"), []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("installing %s packages: %v", kind, err)
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("installing %s packages: %v", kind, err)
	}
	if kind == "pip" {
		// The venv's python finds its packages through pyvenv.cfg, next to
		// it, so the move is harmless.
		_ = fixVenvScripts(tmp, dir)
	}
	return nil
}

// runInstaller runs pip or npm in the tool folder (so relative package
// paths resolve there) with the tool's clean environment.
func (t *tool) runInstaller(ctx context.Context, argv []string) error {
	env := t.env(nil)
	env = append(env, "npm_config_update_notifier=false", "PIP_DISABLE_PIP_VERSION_CHECK=1")
	for _, n := range []string{"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "npm_config_registry", "NPM_CONFIG_REGISTRY", "npm_config_cache"} {
		if v, ok := t.spec.Lookup(n); ok {
			env = append(env, n+"="+v)
		}
	}
	p, err := proc.Start(proc.Config{
		Argv: argv, Env: env, Dir: t.spec.Dir,
		Stdout: proc.Output{Keep: 64 << 10, Tail: true},
		Stderr: proc.Output{Keep: 64 << 10, Tail: true},
		Grace:  stopGrace,
	})
	if err != nil {
		return err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Stop()
		return fmt.Errorf("%s: %v", filepath.Base(argv[0]), ctx.Err())
	}
	r := p.Result()
	if r.ExitCode != 0 || r.Err != nil {
		out := tailLines(append(r.Stdout, r.Stderr...), 15, 4<<10)
		return fmt.Errorf("%s exited with status %d:\n%s", strings.Join(argv[:min(len(argv), 3)], " "), r.ExitCode, out)
	}
	return nil
}

var (
	pipCulprit = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:No matching distribution found for|Could not find a version that satisfies the requirement|Invalid requirement:|does not appear to be a Python project:|Directory) '?([^\s']+)'?`)
	})
	npmCulprit = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:404\s+'?([^'\s]+)'? is not in (?:this|the npm) registry|No matching version found for ([^\s.]+(?:\.[^\s.]+)*))`)
	})
)

// culprit names the package an installer complained about, if it said.
func culprit(kind, out string) string {
	re := pipCulprit
	if kind == "npm" {
		re = npmCulprit
	}
	m := re().FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	for _, s := range m[1:] {
		if s != "" {
			return fmt.Sprintf(" (the package at fault: %s)", strings.TrimRight(s, ".:,"))
		}
	}
	return ""
}

// fixVenvScripts rewrites the absolute paths a venv wrote into its bin
// scripts, after the venv moved from old to dir.
func fixVenvScripts(old, dir string) error {
	bin := filepath.Join(dir, "bin")
	entries, err := os.ReadDir(bin)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(bin, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(data), old) {
			continue
		}
		_ = os.WriteFile(p, []byte(strings.ReplaceAll(string(data), old, dir)), fi.Mode().Perm())
	}
	return nil
}
