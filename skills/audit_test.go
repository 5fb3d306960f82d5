package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// tool calls one of srv's tools in process.
func tool(t *testing.T, srv *Server, ctx context.Context, name string, args any) result {
	t.Helper()
	a, _ := json.Marshal(args)
	raw, err := srv.CallTool(ctx, name, a, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return decode(t, raw)
}

func problemStrings(s *Snapshot) string {
	var out []string
	for _, p := range s.Problems() {
		out = append(out, p.String())
	}
	return strings.Join(out, "\n")
}

// TestSymlinkedSkillMDJailed: a SKILL.md that is a symlink leading out of
// its skill folder is refused at discovery with a problem, and a SKILL.md
// swapped for such a link after discovery is refused by load_skill and
// prompts/get, as resources/read refuses it; a link inside the folder
// works.
func TestSymlinkedSkillMDJailed(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "skills")
	writeTree(t, base, map[string]string{
		"outside/x/SKILL.md":          skillMD("mdlink", "Secret instructions from outside."),
		"skills/mdlink/SKILL.md":      "->../../outside/x/SKILL.md",
		"skills/inlink/real.md":       skillMD("inlink", "Linked inside its folder."),
		"skills/inlink/SKILL.md":      "->real.md",
		"skills/swapped/SKILL.md":     skillMD("swapped", "Will become a link."),
		"skills/swapped/scripts/a.sh": "echo a\n",
	})
	l := openLib(t, Options{Dirs: []string{dir}})
	if got := ids(l.Snapshot()); strings.Join(got, ",") != "inlink,swapped" {
		t.Errorf("ids = %v, want inlink and swapped (mdlink leads out)", got)
	}
	if ps := problemStrings(l.Snapshot()); !strings.Contains(ps, "mdlink/SKILL.md: cannot read: it leads out of the skill folder") {
		t.Errorf("problems:\n%s", ps)
	}
	srv := NewServer(l)
	ctx := context.Background()
	if r := tool(t, srv, ctx, ToolLoad, map[string]string{"skill": "inlink"}); r.IsError || !strings.Contains(r.text(), "# inlink") {
		t.Errorf("inlink: %s", r.text())
	}
	// Swap swapped's SKILL.md for a link leading out.
	md := filepath.Join(dir, "swapped/SKILL.md")
	os.Remove(md)
	os.Symlink(filepath.Join(base, "outside/x/SKILL.md"), md)
	if r := tool(t, srv, ctx, ToolLoad, map[string]string{"skill": "swapped"}); !r.IsError || strings.Contains(r.text(), "Secret") || !strings.Contains(r.text(), "leads out") {
		t.Errorf("load_skill served a SKILL.md leading out: %s", r.text())
	}
	if raw, err := srv.Call(ctx, sdk.CallRequest{Method: "prompts/get", Params: json.RawMessage(`{"name":"swapped"}`)}, nil); err == nil {
		t.Errorf("prompts/get served a SKILL.md leading out: %s", raw)
	}
	if raw, err := srv.Call(ctx, sdk.CallRequest{Method: "resources/read", Params: json.RawMessage(`{"uri":"skill://swapped/SKILL.md"}`)}, nil); err == nil {
		t.Errorf("resources/read served a SKILL.md leading out: %s", raw)
	}
}

// TestFooterListsOnlyJailedFiles: load_skill's footer and the skill's
// scripts leave out symlinks that lead out of the folder.
func TestFooterListsOnlyJailedFiles(t *testing.T) {
	base := t.TempDir()
	writeTree(t, base, map[string]string{
		"other/evil.sh":                  "echo evil\n",
		"other/secret.md":                "secret\n",
		"skills/s/SKILL.md":              skillMD("s", "A skill with links."),
		"skills/s/scripts/ok.sh":         "echo ok\n",
		"skills/s/scripts/evil.sh":       "->../../../other/evil.sh",
		"skills/s/references/guide.md":   "# Guide\n",
		"skills/s/references/secret.md":  "->../../../other/secret.md",
		"skills/s/references/inside.md":  "->guide.md",
		"skills/s/references/abs-out.md": "->" + filepath.Join(base, "other/secret.md"),
	})
	l := openLib(t, Options{Dirs: []string{filepath.Join(base, "skills")}})
	sk, err := l.Lookup("s")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sk.Scripts, ",") != "ok.sh" {
		t.Errorf("scripts = %v, want ok.sh only", sk.Scripts)
	}
	r := tool(t, NewServer(l), context.Background(), ToolLoad, map[string]string{"skill": "s"})
	footer := r.text()[strings.LastIndex(r.text(), "---\nskill s"):]
	for _, bad := range []string{"evil.sh", "secret.md", "abs-out.md"} {
		if strings.Contains(footer, bad) {
			t.Errorf("footer offers %s, which leads out:\n%s", bad, footer)
		}
	}
	if !strings.Contains(footer, "references/inside.md") || !strings.Contains(footer, "references/guide.md") {
		t.Errorf("footer lacks the files inside:\n%s", footer)
	}
}

// TestReservedNamespaces: a skill named after a namespace of the
// gateway's own tools keeps its instructions, but its tools and pipelines
// are not served, with an error naming the reserved names.
func TestReservedNamespaces(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"pipeline/SKILL.md":               skillMD("pipeline", "Takes the gateway's pipeline__ names."),
		"pipeline/tools/create/tool.yaml": "name: create\n",
		"pipeline/pipelines/p.yaml":       "",
		"weekly/SKILL.md":                 skillMD("weekly", "A fine skill."),
		"weekly/tools/greet/tool.yaml":    "name: greet\n",
	})
	l := openLib(t, Options{Dirs: []string{dir}, ReservedNamespaces: []string{"admin", "pipeline", "skill"}})
	sk, err := l.Lookup("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if len(sk.ToolDirs) != 0 || sk.PipelinesDir != "" {
		t.Errorf("reserved skill keeps tools %v, pipelines %q", sk.ToolDirs, sk.PipelinesDir)
	}
	var found bool
	for _, p := range l.Snapshot().Problems() {
		if !p.Warning && strings.Contains(p.String(), `"pipeline" is the namespace of the gateway's own tools (pipeline__*)`) && strings.Contains(p.Msg, "admin, pipeline, skill") {
			found = true
		}
	}
	if !found {
		t.Errorf("no error about the reserved name:\n%s", problemStrings(l.Snapshot()))
	}
	if w, _ := l.Lookup("weekly"); len(w.ToolDirs) != 1 {
		t.Errorf("weekly's tools: %v", w.ToolDirs)
	}
}

// TestRootIsASkill: a folder given as a root that is itself a skill
// folder is that one skill.
func TestRootIsASkill(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"hello/SKILL.md": skillMD("hello", "Say hello."), "hello/scripts/hi.sh": "echo hi\n"})
	l := openLib(t, Options{Dirs: []string{filepath.Join(dir, "hello")}})
	if got := ids(l.Snapshot()); strings.Join(got, ",") != "hello" {
		t.Errorf("ids = %v", got)
	}
}

// TestPromptNameCollision: team/x and team_x share a prompt name; the
// second gets a warning saying it has no prompt, and prompts/get serves
// the first.
func TestPromptNameCollision(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"team/x/SKILL.md": skillMD("x", "The team's x."),
		"team_x/SKILL.md": skillMD("team_x", "Another x."),
	})
	l := openLib(t, Options{Dirs: []string{dir}})
	ps := problemStrings(l.Snapshot())
	if !strings.Contains(ps, "team_x/SKILL.md:2: warning: name: the prompt team_x is skill team/x's already") {
		t.Errorf("problems:\n%s", ps)
	}
	raw, err := NewServer(l).Call(context.Background(), sdk.CallRequest{Method: "prompts/get", Params: json.RawMessage(`{"name":"team_x"}`)}, nil)
	if err != nil || !strings.Contains(string(raw), "The team's x.") {
		t.Errorf("prompts/get team_x: %s %v", raw, err)
	}
}

// TestLargeSkill: a SKILL.md past the body cap is a warning; a section
// past the cut says why it is missing; load_skill fits a whole body or a
// long section to the output budget; read_skill_file pages fit it too.
func TestLargeSkill(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(skillMD("big", "A very long skill."))
	para := strings.Repeat("Some words of instructions. ", 40) + "\n\n"
	b.WriteString("## Top\n\n")
	for i := range 20 {
		fmt.Fprintf(&b, "### Part %d\n\n", i)
		for b.Len() < (i+1)*100_000 {
			b.WriteString(para)
		}
	}
	b.WriteString("## Late section\n\nPast the cut.\n")
	writeTree(t, dir, map[string]string{"big/SKILL.md": b.String()})
	l := openLib(t, Options{Dirs: []string{dir}, OutputBudget: 80_000})
	if ps := problemStrings(l.Snapshot()); !strings.Contains(ps, "big/SKILL.md: warning: ") || !strings.Contains(ps, "first 1 MiB of the body") {
		t.Errorf("no warning about the cap:\n%s", ps)
	}
	srv := NewServer(l)
	ctx := context.Background()
	r := tool(t, srv, ctx, ToolLoad, map[string]string{"skill": "big", "section": "Late section"})
	if !r.IsError || !strings.Contains(r.text(), "only the first 1 MiB of the body is served") {
		t.Errorf("late section: %.300s", r.text())
	}
	for _, args := range []map[string]string{{"skill": "big"}, {"skill": "big", "section": "Top"}} {
		raw, _ := srv.CallTool(ctx, ToolLoad, mustMarshal(args), nil)
		r := decode(t, raw)
		if r.IsError || len(raw) > 80_000 || !strings.Contains(r.text(), "- Part 3") {
			t.Errorf("load_skill %v: %d bytes (budget 80000): %.200s", args, len(raw), r.text())
		}
	}
	raw, _ := srv.CallTool(ctx, ToolReadFile, mustMarshal(map[string]string{"skill": "big", "path": "SKILL.md"}), nil)
	if r := decode(t, raw); r.IsError || len(raw) > 80_000 || !strings.Contains(r.text(), "offset: ") {
		t.Errorf("read_skill_file: %d bytes (budget 80000): %.200s", len(raw), r.text())
	}
}

func mustMarshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// TestCardsKeepCharacters: a card cut inside a non-ASCII description is
// valid UTF-8.
func TestCardsKeepCharacters(t *testing.T) {
	dir := t.TempDir()
	desc := "x" + strings.Repeat("日本語のテキスト", 30) // 120 bytes in is inside a character
	writeTree(t, dir, map[string]string{"jp/SKILL.md": skillMD("jp", desc)})
	l := openLib(t, Options{Dirs: []string{dir}})
	sk, _ := l.Lookup("jp")
	if c := sk.Card(); !utf8.ValidString(c) || !strings.HasSuffix(c, "…") {
		t.Errorf("card %q", c)
	}
}

// TestGlobalHooksPickedUp: a skills dir's _hooks folder created while
// the library runs guards the next run (hooks fail closed, so it must
// not be missed until a reload).
func TestGlobalHooksPickedUp(t *testing.T) {
	need(t, "bash")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"s/SKILL.md": skillMD("s", "A skill."), "s/scripts/a.sh": "echo ran\n"})
	l := scriptLib(t, dir, Options{})
	ctx := context.Background()
	if _, err := l.RunScript(ctx, RunRequest{Skill: "s", Script: "a.sh"}, nil); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"_hooks/pre.sh": `cat > /dev/null; echo '{"decision":"deny","reason":"global hook"}'` + "\n"})
	if !l.Changed() {
		t.Fatal("a new _hooks folder is not seen as a change")
	}
	if _, err := l.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RunScript(ctx, RunRequest{Skill: "s", Script: "a.sh"}, nil); !errors.Is(err, ErrDenied) {
		t.Errorf("run after _hooks appeared: %v, want denied", err)
	}
}

// TestProblemsLoggedOnChange: a broken skill is logged once, not on
// every rescan; warnings are logged too.
func TestProblemsLoggedOnChange(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"broken/SKILL.md":  "---\nname: broken\n",
		"renamed/SKILL.md": skillMD("new-name", "Its folder has another name."),
	})
	var buf bytes.Buffer
	l := openLib(t, Options{Dirs: []string{dir}, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	for range 3 {
		if err := l.Rescan(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "frontmatter is not closed"); n != 1 {
		t.Errorf("the broken skill was logged %d times:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "differs from its folder") {
		t.Errorf("the name warning was not logged:\n%s", buf.String())
	}
}

// TestProblemPaths: problems name paths relative to the working folder
// (absolute outside it), and a YAML error carries one line number.
func TestProblemPaths(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"yaml/SKILL.md":     "---\nname: yaml\ndescription: a: b\n---\n",
		"lower/skill.md":    skillMD("lower", "Lower case."),
		"listdesc/SKILL.md": "---\nname: listdesc\ndescription: [a, b]\n---\n",
	})
	l := openLib(t, Options{Dirs: []string{dir}})
	ps := problemStrings(l.Snapshot())
	want := filepath.Join(dir, "yaml/SKILL.md") + ":3: frontmatter is not valid YAML: mapping values are not allowed in this context"
	if !strings.Contains(ps, want) {
		t.Errorf("problems lack %q:\n%s", want, ps)
	}
	if !strings.Contains(ps, filepath.Join(dir, "lower/skill.md")+": warning: not read: a skill's file is SKILL.md, in upper case") {
		t.Errorf("no warning about skill.md:\n%s", ps)
	}
	if n := strings.Count(ps, "listdesc/SKILL.md"); n != 1 {
		t.Errorf("a list description gives %d problems, want 1:\n%s", n, ps)
	}
	// Under the working folder, paths are relative to it.
	t.Chdir(dir)
	l = openLib(t, Options{Dirs: []string{dir}})
	if ps := problemStrings(l.Snapshot()); !strings.Contains(ps, "\nyaml/SKILL.md:3: ") && !strings.HasPrefix(ps, "yaml/SKILL.md:3: ") {
		t.Errorf("paths are not relative to the working folder:\n%s", ps)
	}
}

// TestToolArgumentErrors: bad arguments are explained in the tool's
// terms, find_skills refuses limits and cursors it cannot use, and
// skills/list refuses a cursor it did not give.
func TestToolArgumentErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a/SKILL.md": skillMD("a", "Skill a."), "b/SKILL.md": skillMD("b", "Skill b.")})
	srv := NewServer(openLib(t, Options{Dirs: []string{dir}}))
	ctx := context.Background()
	for _, c := range []struct {
		name string
		args any
		want string
	}{
		{ToolFind, map[string]any{"limit": 0}, "limit: 0 is not between 1 and 100"},
		{ToolFind, map[string]any{"limit": 500}, "limit: 500 is not between 1 and 100"},
		{ToolFind, map[string]any{"limit": "x"}, "limit: want an integer, got a JSON string"},
		{ToolFind, map[string]any{"cursor": "zz"}, `cursor: "zz" is not a next_cursor`},
		{ToolFind, map[string]any{"cursor": "99"}, `cursor: "99" is not a next_cursor`},
		{ToolLoad, map[string]any{"skill": 5}, "skill: want text (a JSON string), got a JSON number"},
		{ToolRun, map[string]any{"skill": "a", "script": "x", "args": "one"}, "args: want a list of strings, got a JSON string"},
	} {
		r := tool(t, srv, ctx, c.name, c.args)
		if !r.IsError || !strings.Contains(r.text(), c.want) || strings.Contains(r.text(), "Go struct") {
			t.Errorf("%s %v: %q, want %q", c.name, c.args, r.text(), c.want)
		}
	}
	if r := tool(t, srv, ctx, ToolFind, map[string]any{"limit": 1, "cursor": "1"}); r.IsError || !strings.HasPrefix(r.text(), "b: ") {
		t.Errorf("second page: %s", r.text())
	}
	_, err := srv.Call(ctx, sdk.CallRequest{Method: "skills/list", Params: json.RawMessage(`{"cursor":"bogus"}`)}, nil)
	var re *sdk.RPCError
	if !errors.As(err, &re) || re.Code != sdk.CodeInvalidParams || !strings.Contains(re.Message, `cursor "bogus"`) {
		t.Errorf("skills/list with a bogus cursor: %v", err)
	}
}

// TestRunStatusOnDenial: a run a hook denied, and one that could not
// start, carry _meta["skillgate/status"] like every run's result.
func TestRunStatusOnDenial(t *testing.T) {
	need(t, "bash")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"s/SKILL.md":      skillMD("s", "A guarded skill."),
		"s/scripts/a.sh":  "echo ran\n",
		"s/hooks/pre.sh":  `cat > /dev/null; echo '{"decision":"deny","reason":"no"}'` + "\n",
		"t/SKILL.md":      skillMD("t", "A failing post hook."),
		"t/scripts/a.sh":  "echo ran\n",
		"t/hooks/post.sh": `cat > /dev/null; echo '{"decision":"fail","reason":"bad output"}'` + "\n",
	})
	srv := NewServer(scriptLib(t, dir, Options{}))
	ctx := context.Background()
	for _, c := range []struct{ skill, script, status string }{
		{"s", "a.sh", "denied"}, {"t", "a.sh", "denied"}, {"s", "nope.sh", "error"},
	} {
		r := tool(t, srv, ctx, ToolRun, map[string]string{"skill": c.skill, "script": c.script})
		if !r.IsError || r.Meta["skillgate/status"] != c.status {
			t.Errorf("%s %s: status %v, want %s: %s", c.skill, c.script, r.Meta["skillgate/status"], c.status, r.text())
		}
	}
}

// TestStallHintNamesSKILLMD: a skill script killed as stalled is told
// where its policy lives: SKILL.md, not tool.yaml.
func TestStallHintNamesSKILLMD(t *testing.T) {
	need(t, "bash")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"s/SKILL.md":         skillMD("s", "A quiet skill.", "scripts:\n  quiet.sh: {stall_timeout: 200ms}\n"),
		"s/scripts/quiet.sh": "sleep 5\n",
	})
	srv := NewServer(scriptLib(t, dir, Options{}))
	r := tool(t, srv, context.Background(), ToolRun, map[string]string{"skill": "s", "script": "quiet.sh"})
	if r.Meta["skillgate/status"] != "stalled" || strings.Contains(r.text(), "tool.yaml") || !strings.Contains(r.text(), "stall_timeout for quiet.sh in the skill's SKILL.md") {
		t.Errorf("stalled hint: %v %s", r.Meta, r.text())
	}
}

// TestFooterNamesMissingSkills: a required skill that is not installed
// is not claimed as brought by activation.
func TestFooterNamesMissingSkills(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"needy/SKILL.md":  skillMD("needy", "Needs things.", "requires: {skills: [ghost, helper], servers: [nosuchserver]}\n"),
		"helper/SKILL.md": skillMD("helper", "Helps."),
	})
	r := tool(t, NewServer(openLib(t, Options{Dirs: []string{dir}})), context.Background(), ToolLoad, map[string]string{"skill": "needy"})
	if !strings.Contains(r.text(), "skills ghost (not installed), helper") {
		t.Errorf("footer: %s", r.text())
	}
}

type scopeKey struct{}

// TestScope: a scoped server acts as if the skills outside the scope were
// not installed, in every tool and method.
func TestScope(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"weekly/SKILL.md": skillMD("weekly", "Weekly report."),
		"other/SKILL.md":  skillMD("other", "Another report."),
	})
	srv := NewServer(openLib(t, Options{Dirs: []string{dir}}))
	srv.Scope(func(ctx context.Context, id string) bool {
		only, _ := ctx.Value(scopeKey{}).(string)
		return only == "" || only == id
	}, func(ctx context.Context) string { s, _ := ctx.Value(scopeKey{}).(string); return s })
	scoped := context.WithValue(context.Background(), scopeKey{}, "weekly")
	if r := tool(t, srv, scoped, ToolFind, map[string]any{}); strings.Contains(r.text(), "other") || !strings.Contains(r.text(), "weekly") {
		t.Errorf("find_skills scoped: %s", r.text())
	}
	if r := tool(t, srv, scoped, ToolLoad, map[string]any{"skill": "other"}); !r.IsError || !strings.Contains(r.text(), "unknown skill") {
		t.Errorf("load_skill out of scope: %s", r.text())
	}
	if r := tool(t, srv, scoped, ToolReadFile, map[string]any{"skill": "other", "path": "SKILL.md"}); !r.IsError {
		t.Errorf("read_skill_file out of scope: %s", r.text())
	}
	list := func(ctx context.Context) string {
		raw, err := srv.Call(ctx, sdk.CallRequest{Method: "skills/list"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	if l := list(scoped); strings.Contains(l, "skill://other/") || !strings.Contains(l, "skill://weekly/") {
		t.Errorf("skills/list scoped: %s", l)
	}
	if l := list(context.Background()); !strings.Contains(l, "skill://other/") {
		t.Errorf("skills/list unscoped (right after the scoped one): %s", l)
	}
	for _, m := range []struct{ method, params string }{
		{"skills/get", `{"uri":"skill://other/SKILL.md"}`},
		{"prompts/get", `{"name":"other"}`},
		{"resources/read", `{"uri":"skill://other/SKILL.md"}`},
	} {
		if raw, err := srv.Call(scoped, sdk.CallRequest{Method: m.method, Params: json.RawMessage(m.params)}, nil); err == nil {
			t.Errorf("%s out of scope: %s", m.method, raw)
		}
	}
}
