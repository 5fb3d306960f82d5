package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingDirsWarn checks that a tools, pipelines, skills or plugins
// folder that is not there is a warning at its line in the config, naming
// the absolute path looked for and what a relative one is resolved
// against, and that one that is there is not.
func TestMissingDirsWarn(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c.yaml")
	const yaml = `tools: {dirs: [./tools, ./nada]}
pipelines: {dirs: [./nope]}
skills: {dirs: [./nskills]}
plugins: {dirs: [./nplugins]}
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.Warnings() {
		got = append(got, w.Error())
	}
	all := strings.Join(got, "\n")
	rel := "(a relative folder is resolved against the config file's folder, " + dir + "); create it, or fix the path"
	for _, want := range []string{
		path + ":1:25: tools.dirs[1]: " + filepath.Join(dir, "nada") + " does not exist " + rel,
		path + ":2:20: pipelines.dirs[0]: " + filepath.Join(dir, "nope") + " does not exist " + rel,
		path + ":3:17: skills.dirs[0]: " + filepath.Join(dir, "nskills"),
		path + ":4:18: plugins.dirs[0]: " + filepath.Join(dir, "nplugins"),
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	if len(got) != 4 {
		t.Errorf("want 4 warnings, got:\n%s", all)
	}
}
