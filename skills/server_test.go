package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/script"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/skills/shape"
)

const examples = "../examples/skills"

// exampleServer serves examples/skills through the gRPC plugin link, with
// the script executor behind a gRPC link too, as the gateway runs them.
func exampleServer(t *testing.T, opts Options) (*Server, *sdktest.Client) {
	t.Helper()
	ex := script.New(script.WithRoot(t.TempDir()), script.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { ex.Close() })
	opts.Dirs = []string{examples}
	opts.Executor = sdktest.Start(t, ex, nil)
	opts.StateDir = t.TempDir()
	l := openLib(t, opts)
	for _, p := range l.Snapshot().Problems() {
		t.Errorf("example problem: %s", p)
	}
	srv := NewServer(l)
	return srv, sdktest.Start(t, srv, nil)
}

func callTool(t *testing.T, c *sdktest.Client, name string, args any) result {
	t.Helper()
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	raw, err := c.Call(context.Background(), sdk.CallRequest{Source: "skills", Method: "tools/call", Params: params}, &sdktest.Recorder{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return decode(t, raw)
}

func call(t *testing.T, c *sdktest.Client, method string, params any) (json.RawMessage, error) {
	t.Helper()
	p, _ := json.Marshal(params)
	return c.Call(context.Background(), sdk.CallRequest{Source: "skills", Method: method, Params: p}, &sdktest.Recorder{})
}

func TestExamplesLevels(t *testing.T) {
	need(t, "python3", "bash", "git")
	_, c := exampleServer(t, Options{OutputBudget: 8000, Artifacts: shape.NewStore(0, 0)})
	defs, err := c.Load(context.Background(), sdk.LoadRequest{Source: "skills", Kind: "skills"})
	if err != nil {
		t.Fatal(err)
	}
	if len(defs.Tools) != 5 || len(defs.Prompts) != 5 || len(defs.Resources) != 5 || len(defs.ResourceTemplates) != 1 {
		t.Errorf("definitions: %d tools, %d prompts, %d resources", len(defs.Tools), len(defs.Prompts), len(defs.Resources))
	}

	// Level 1: cards.
	r := callTool(t, c, ToolFind, map[string]any{})
	cards := strings.Split(strings.TrimSpace(r.text()), "\n")
	if len(cards) != 5 || !strings.HasPrefix(cards[0], "acme/incident-review: ") {
		t.Errorf("cards:\n%s", r.text())
	}
	for _, card := range cards {
		if len(card) > 200 {
			t.Errorf("card of %d bytes: %s", len(card), card)
		}
	}
	if r := callTool(t, c, ToolFind, map[string]any{"query": "profile a csv file"}); !strings.HasPrefix(r.text(), "csv-insights: ") {
		t.Errorf("find csv:\n%s", r.text())
	}
	if r := callTool(t, c, ToolFind, map[string]any{"limit": 2}); !strings.Contains(r.text(), "next_cursor: 2 (3 more)") {
		t.Errorf("page:\n%s", r.text())
	}

	// Level 2: the body, or one section.
	r = callTool(t, c, ToolLoad, map[string]any{"skill": "csv-insights"})
	for _, want := range []string{"# CSV insights", "scripts (run_skill_script): profile.py (Profile a CSV file; prints JSON);", "files (read_skill_file): references/interpreting.md"} {
		if !strings.Contains(r.text(), want) {
			t.Errorf("load lacks %q:\n%s", want, r.text())
		}
	}
	if strings.Contains(r.text(), "name: csv-insights") {
		t.Error("load_skill returned the frontmatter")
	}
	r = callTool(t, c, ToolLoad, map[string]any{"skill": "csv-insights", "section": "read the profile"})
	if !strings.HasPrefix(r.text(), "## Read the profile") || strings.Contains(r.text(), "## Answer") {
		t.Errorf("section:\n%s", r.text())
	}
	if r := callTool(t, c, ToolLoad, map[string]any{"skill": "pg-reports"}); !strings.Contains(r.text(), "activate skill:pg-reports for its tools (it brings servers postgres-mcp; services postgres; tools postgres-mcp__query)") {
		t.Errorf("pg footer:\n%s", r.text())
	}
	if r := callTool(t, c, ToolLoad, map[string]any{"skill": "nope"}); !r.IsError || !strings.Contains(r.text(), "find_skills lists the skills") {
		t.Errorf("unknown skill: %+v", r)
	}

	// Level 3: a referenced file, jailed.
	r = callTool(t, c, ToolReadFile, map[string]any{"skill": "incident-review", "path": "references/five-whys.md"})
	if r.IsError || !strings.HasPrefix(r.text(), "# Five whys") {
		t.Errorf("read file: %+v", r)
	}
	if r := callTool(t, c, ToolReadFile, map[string]any{"skill": "incident-review", "path": "../../csv-insights/SKILL.md"}); !r.IsError {
		t.Errorf("read outside: %s", r.text())
	}

	// Level 4: scripts.
	work := t.TempDir()
	csvPath := filepath.Join(work, "orders.csv")
	os.WriteFile(csvPath, []byte("id,amount,day\n1,9.5,2024-05-01\n2,N/A,2024-05-02\n3,12,\n"), 0o644)
	r = callTool(t, c, ToolRun, map[string]any{"skill": "csv-insights", "script": "profile.py", "args": []string{csvPath}})
	cols, _ := r.StructuredContent["columns"].(map[string]any)
	if r.IsError || r.StructuredContent["rows"] != 3.0 || cols["amount"].(map[string]any)["mixed"] == nil {
		t.Errorf("profile: %s", r.text())
	}
	repo := filepath.Join(work, "repo")
	gitRun(t, "", "init", "-q", repo)
	gitRun(t, repo, "commit", "-q", "--allow-empty", "-m", "chore: start")
	gitRun(t, repo, "tag", "v1")
	gitRun(t, repo, "commit", "-q", "--allow-empty", "-m", "feat(api): pagination")
	r = callTool(t, c, ToolRun, map[string]any{"skill": "release-notes", "script": "commits.sh", "args": []string{repo, "v1"}})
	if r.IsError || !strings.Contains(r.text(), "\tfeat(api): pagination") || strings.Contains(r.text(), "chore: start") {
		t.Errorf("commits: %q", r.text())
	}
	// log-triage: its hooks deny a path outside /tmp and /var/log, and
	// redact secrets.
	logDir, err := os.MkdirTemp("/tmp", "skills-log-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(logDir)
	logPath := filepath.Join(logDir, "app.log")
	os.WriteFile(logPath, []byte("start\nINFO ok\nERROR connect failed: password=hunter2 host=db\nmore\n"), 0o644)
	r = callTool(t, c, ToolRun, map[string]any{"skill": "log-triage", "script": "errors.py", "args": []string{logPath}})
	if r.IsError || strings.Contains(r.text(), "hunter2") || !strings.Contains(r.text(), "password=[redacted]") {
		t.Errorf("triage: %s", r.text())
	}
	r = callTool(t, c, ToolRun, map[string]any{"skill": "log-triage", "script": "errors.py", "args": []string{"/etc/passwd"}})
	if !r.IsError || !strings.Contains(r.text(), "denied by hook pre.py: /etc/passwd is outside the log folders") {
		t.Errorf("deny: %s", r.text())
	}
	if r := callTool(t, c, ToolRun, map[string]any{"skill": "log-triage", "script": "../hooks/pre.py"}); !r.IsError {
		t.Errorf("ran a hook as a script: %s", r.text())
	}

	// The skill's tool folder is a valid tool.
	pg, _ := NewServer(openLib(t, Options{Dirs: []string{examples}})).lib.Lookup("pg-reports")
	if len(pg.ToolDirs) != 1 {
		t.Fatalf("pg tool dirs %v", pg.ToolDirs)
	}
	if _, err := toolspec.Load(pg.ToolDirs[0]); err != nil {
		t.Errorf("table_sizes: %v", err)
	}
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestPromptsAndResources(t *testing.T) {
	_, c := exampleServer(t, Options{})
	raw, err := call(t, c, "prompts/get", map[string]any{"name": "acme_incident-review"})
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(raw, &p)
	if len(p.Messages) != 1 || p.Messages[0].Role != "user" || !strings.HasPrefix(p.Messages[0].Content.Text, "# Incident review (Acme)") {
		t.Errorf("prompt: %s", raw)
	}
	read := func(uri string) (string, error) {
		raw, err := call(t, c, "resources/read", map[string]any{"uri": uri})
		if err != nil {
			return "", err
		}
		var r struct {
			Contents []struct {
				URI, MimeType, Text string
			} `json:"contents"`
		}
		json.Unmarshal(raw, &r)
		return r.Contents[0].Text, nil
	}
	for uri, want := range map[string]string{
		"skill://csv-insights":                                "---\nname: csv-insights",
		"skill://csv-insights/SKILL.md":                       "---\nname: csv-insights",
		"skill://acme/incident-review/references/template.md": "# Incident <id>",
		"skill://csv-insights/scripts/profile.py":             `"""Profile a CSV file`,
	} {
		if got, err := read(uri); err != nil || !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q %v", uri, got, err)
		}
	}
	for _, uri := range []string{"skill://csv-insights/../release-notes/SKILL.md", "skill://nope/SKILL.md", "file:///etc/passwd", "skill://acme/SKILL.md"} {
		if _, err := read(uri); err == nil {
			t.Errorf("%s was served", uri)
		}
	}
}

// TestSkillsExtension: skills/list and skills/get answer as SEP-2640 says.
func TestSkillsExtension(t *testing.T) {
	_, c := exampleServer(t, Options{})
	raw, err := call(t, c, "skills/list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		ResultType string       `json:"resultType"`
		Skills     []SkillEntry `json:"skills"`
		TTL        int          `json:"ttlMs"`
		CacheScope string       `json:"cacheScope"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	if list.ResultType != "complete" || len(list.Skills) != 5 || list.TTL == 0 || list.CacheScope == "" {
		t.Fatalf("list: %s", raw)
	}
	for _, e := range list.Skills {
		name := e.Frontmatter["name"].(string)
		if !strings.HasSuffix(e.URI, "/"+name+"/SKILL.md") || e.Resources[0].URI == "" {
			t.Errorf("entry %s", e.URI)
		}
		if !strings.Contains(e.URI, "incident-review") {
			continue
		}
		if e.URI != "skill://acme/incident-review/SKILL.md" || len(e.Resources) != 3 {
			t.Errorf("incident-review entry: %+v", e)
		}
		for _, r := range e.Resources {
			data, _ := os.ReadFile(filepath.Join(examples, strings.TrimPrefix(r.URI, "skill://")))
			sum := sha256.Sum256(data)
			if r.Digest != "sha256:"+hex.EncodeToString(sum[:]) || r.Size != int64(len(data)) {
				t.Errorf("%s: digest %s size %d", r.URI, r.Digest, r.Size)
			}
		}
	}
	if pg := list.Skills[3]; pg.Frontmatter["requires"] == nil {
		t.Errorf("frontmatter not verbatim: %v", pg.Frontmatter)
	}
	raw, err = call(t, c, "skills/get", map[string]any{"uri": "skill://log-triage/SKILL.md"})
	if err != nil || !strings.Contains(string(raw), `"uri":"skill://log-triage/hooks/post.py"`) {
		t.Errorf("get: %s %v", raw, err)
	}
	if _, err := call(t, c, "skills/get", map[string]any{"uri": "skill://log-triage/scripts/errors.py"}); err == nil {
		t.Error("skills/get of a non-SKILL.md answered")
	}
}

// TestSkillsListCache: a skills/list page is answered from memory while
// the snapshot stays the same and for at most ListCacheAge; a new snapshot
// shows at once, a file the snapshot does not track after the age.
func TestSkillsListCache(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a/SKILL.md": skillMD("a", "The a skill."), "a/references/r.md": "one"})
	l := openLib(t, Options{Dirs: []string{dir}})
	c := sdktest.Start(t, NewServer(l), nil)
	list := func() string {
		t.Helper()
		raw, err := call(t, c, "skills/list", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	digest := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	if got := list(); !strings.Contains(got, digest("one")) {
		t.Fatalf("first list: %s", got)
	}
	writeTree(t, dir, map[string]string{"a/references/r.md": "two"})
	if got := list(); !strings.Contains(got, digest("one")) {
		t.Errorf("within ListCacheAge, without a new snapshot: %s", got)
	}
	writeTree(t, dir, map[string]string{"b/SKILL.md": skillMD("b", "The b skill.")})
	if err := l.Rescan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := list(); !strings.Contains(got, "skill://b/SKILL.md") || !strings.Contains(got, digest("two")) {
		t.Errorf("after a new snapshot: %s", got)
	}
	writeTree(t, dir, map[string]string{"a/references/r.md": "three"})
	old := ListCacheAge
	ListCacheAge = 10 * time.Millisecond
	t.Cleanup(func() { ListCacheAge = old })
	time.Sleep(20 * time.Millisecond)
	if got := list(); !strings.Contains(got, digest("three")) {
		t.Errorf("after ListCacheAge: %s", got)
	}
}
