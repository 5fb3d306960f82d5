package gateway_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// copyDir copies a folder tree (files and modes).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSkillsThroughGateway: every level of a skill through mcp-go's
// client on a progressive endpoint: the skills meta-tools are listed,
// cards, body, section, file, a script run by the out-of-process script
// executor, prompts and skill:// resources, activation of a skill's own
// tool, and a skill added while running.
func TestSkillsThroughGateway(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is missing")
		}
		t.Skip("python3 is missing")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // scripts' state folders stay out of the user's home
	dir := t.TempDir()
	copyDir(t, "../examples/skills", dir)
	// pg-reports' tool asks for PGPASSWORD, which the operator lets skills have.
	r := startGateway(t, "disclosure: progressive\nskills: {dirs: ["+dir+"], env_allow: [PGPASSWORD]}\n", nil)
	r.waitReady(t)
	ctx := context.Background()
	gc := newGoClient(t, ctx, r.url+"/mcp", mcp.ProtocolVersion20251125)

	list, err := gc.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"find_skills", "load_skill", "read_skill_file", "run_skill_script"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s not listed: %v", want, names)
		}
	}
	if slices.Contains(names, "pg-reports__table_sizes") {
		t.Error("a skill's tool is listed before activation")
	}

	if got := resultText(gc.call(t, ctx, "find_skills", map[string]any{"query": "csv"}, nil)); !strings.HasPrefix(got, "csv-insights: Profile a CSV file") {
		t.Errorf("find_skills: %s", got)
	}
	if got := resultText(gc.call(t, ctx, "load_skill", map[string]any{"skill": "release-notes", "section": "sort them"}, nil)); !strings.HasPrefix(got, "## Sort them") {
		t.Errorf("load_skill: %s", got)
	}
	if got := resultText(gc.call(t, ctx, "read_skill_file", map[string]any{"skill": "acme/incident-review", "path": "references/template.md"}, nil)); !strings.HasPrefix(got, "# Incident <id>") {
		t.Errorf("read_skill_file: %s", got)
	}
	csv := filepath.Join(t.TempDir(), "a.csv")
	os.WriteFile(csv, []byte("x,y\n1,2\n3,4\n"), 0o644)
	res := gc.call(t, ctx, "run_skill_script", map[string]any{"skill": "csv-insights", "script": "profile.py", "args": []string{csv}}, nil)
	if res.IsError || !strings.Contains(resultText(res), `"rows":2`) {
		t.Errorf("run_skill_script: %s", resultText(res))
	}

	prompts, err := gc.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var pnames []string
	for _, p := range prompts.Prompts {
		pnames = append(pnames, p.Name)
	}
	if !slices.Contains(pnames, "log-triage") || !slices.Contains(pnames, "acme_incident-review") {
		t.Errorf("prompts: %v", pnames)
	}
	pr, err := gc.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "log-triage"}})
	if err != nil || len(pr.Messages) != 1 || !strings.HasPrefix(mcp.GetTextFromContent(pr.Messages[0].Content), "# Log triage") {
		t.Errorf("prompts/get: %+v %v", pr, err)
	}
	rr, err := gc.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "skill://csv-insights/references/interpreting.md"}})
	if err != nil || len(rr.Contents) != 1 || !strings.HasPrefix(rr.Contents[0].(mcp.TextResourceContents).Text, "# Interpreting a profile") {
		t.Errorf("resources/read: %+v %v", rr, err)
	}

	// Activating the skill shows its own tool, namespaced by the skill.
	if got := resultText(gc.call(t, ctx, "activate", map[string]any{"targets": []string{"skill:pg-reports"}}, nil)); !strings.Contains(got, "pg-reports__table_sizes") {
		t.Errorf("activate: %s", got)
	}
	if !slices.Contains(gc.names(t, ctx), "pg-reports__table_sizes") {
		t.Errorf("after activation: %v", gc.names(t, ctx))
	}

	// A skill added while running is found and runnable on the next call,
	// its scripts/ and, as Anthropic's docx skill keeps them, a script
	// elsewhere in its folder.
	os.MkdirAll(filepath.Join(dir, "hello/scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "hello/scripts/hi.sh"), []byte("echo hello from a new skill\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "hello/ooxml/scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "hello/ooxml/scripts/unpack.py"), []byte("import sys\nprint('unpacked', sys.argv[1])\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "hello/SKILL.md"), []byte("---\nname: hello\ndescription: Say hello.\n---\nRun hi.sh.\n"), 0o644)
	waitFor(t, func() bool {
		return strings.HasPrefix(resultText(gc.call(t, ctx, "find_skills", map[string]any{"query": "hello"}, nil)), "hello: Say hello.")
	})
	if got := resultText(gc.call(t, ctx, "run_skill_script", map[string]any{"skill": "hello", "script": "hi.sh"}, nil)); strings.TrimSpace(got) != "hello from a new skill" {
		t.Errorf("new skill's script: %q", got)
	}
	res = gc.call(t, ctx, "run_skill_script", map[string]any{"skill": "hello", "script": "ooxml/scripts/unpack.py", "args": []string{"a.docx"}}, nil)
	if got := resultText(res); res.IsError || strings.TrimSpace(got) != "unpacked a.docx" {
		t.Errorf("a script outside scripts/: %q", got)
	}
}
