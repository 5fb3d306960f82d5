package skills

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunScriptAnywhere: a skill's scripts may live anywhere in its folder,
// as Anthropic's docx skill keeps ooxml/scripts/unpack.py. A bare name is
// looked for under scripts/ first, then at the skill's root; the jail is
// read_skill_file's; SKILL.md, hooks/ and tool folders are not scripts; a
// policy keyed by the path relative to the skill folder applies; a missing
// script's error names the scripts the skill has.
func TestRunScriptAnywhere(t *testing.T) {
	need(t, "python3", "bash", "node")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"docx/SKILL.md": skillMD("docx", "Edit Word files.",
			"scripts:\n  ooxml/scripts/pack.py: Pack a folder into a .docx\n  ooxml/scripts/quiet.sh: {stall_timeout: 300ms}\n  fill.py: {description: Fill a form}\n"),
		"docx/ooxml/scripts/unpack.py": `import json, os, sys
json.load(sys.stdin)
print(json.dumps({"argv": sys.argv[1:], "cwd_has_skill": os.path.exists("SKILL.md"), "hooked": os.environ.get("HOOKED")}))
`,
		"docx/ooxml/scripts/pack.py":  "print('packed')\n",
		"docx/ooxml/scripts/quiet.sh": "sleep 5\n",
		"docx/ooxml/schema.xsd":       "<xs:schema/>\n",
		"docx/tools/count.js":         "console.log(process.argv.length - 2)\n",
		"docx/tools/t/tool.yaml":      "name: t\nruntime: bash\nentry: main.sh\n",
		"docx/tools/t/main.sh":        "echo tool\n",
		"docx/root.sh":                "echo root-ok\n",
		"docx/fill.py":                "print('root fill')\n",
		"docx/scripts/fill.py":        "print('scripts fill')\n",
		"docx/scripts/sub/deep.sh":    "echo deep\n",
		"docx/notes.txt":              "not runnable\n",
		// The skill's pre hook tells the script which path it ran.
		"docx/hooks/pre.py":    "import json, sys\nev = json.load(sys.stdin)\nprint(json.dumps({\"env\": {\"HOOKED\": ev[\"script\"]}}))\n",
		"docx/hooks/helper.sh": "echo helper\n",
		"docx/hooklink.py":     "->hooks/pre.py",
		"docx/mdlink.sh":       "->SKILL.md",
		"docx/out.sh":          "->../other/evil.sh",
		"other/evil.sh":        "echo evil\n",
	})
	l := scriptLib(t, dir, Options{})
	ctx := context.Background()
	run := func(script string, args ...string) (result, error) {
		raw, err := l.RunScript(ctx, RunRequest{Skill: "docx", Script: script, Args: args}, nil)
		if err != nil {
			return result{}, err
		}
		return decode(t, raw), nil
	}

	for _, p := range []string{"ooxml/scripts/unpack.py", "./ooxml/scripts/unpack.py"} {
		r, err := run(p, "in.docx")
		if err != nil || r.IsError {
			t.Fatalf("%s: %+v %v", p, r, err)
		}
		sc := r.StructuredContent
		if argv, _ := json.Marshal(sc["argv"]); string(argv) != `["in.docx"]` || sc["cwd_has_skill"] != true || sc["hooked"] != "ooxml/scripts/unpack.py" {
			t.Errorf("%s: %v", p, sc)
		}
	}
	for script, want := range map[string]string{
		"ooxml/scripts/pack.py": "packed",
		"tools/count.js":        "0",
		"root.sh":               "root-ok",      // a bare name not under scripts/: the skill's root
		"fill.py":               "scripts fill", // scripts/ first, as before
		"scripts/fill.py":       "scripts fill",
		"sub/deep.sh":           "deep", // scripts/sub/deep.sh, as before
	} {
		r, err := run(script)
		if err != nil || r.IsError || strings.TrimSpace(r.text()) != want {
			t.Errorf("%s: %q %v; want %q", script, r.text(), err, want)
		}
	}
	// The policy keyed by the path in the skill folder applies, and a
	// killed run is told where to raise it.
	r, err := run("ooxml/scripts/quiet.sh")
	if err != nil || r.Meta["skillgate/status"] != "stalled" || !strings.Contains(r.text(), "scripts: {ooxml/scripts/quiet.sh: {...}}") {
		t.Errorf("quiet: %v %q %v", r.Meta, r.text(), err)
	}

	for script, why := range map[string]string{
		"SKILL.md":                    "holds the skill's instructions",
		"hooks/pre.py":                "is under hooks/",
		"hooks/helper.sh":             "is under hooks/",
		"hooklink.py":                 "is a link to the hook hooks/pre.py",
		"mdlink.sh":                   "is a link to the skill's SKILL.md",
		"out.sh":                      "leads out of the skill folder",
		"ooxml/../../other/evil.sh":   "climbs out with ..",
		"scripts/../../other/evil.sh": "climbs out with ..",
		"/bin/sh":                     "absolute",
		"tools/t/main.sh":             "is a tool folder",
		"notes.txt":                   "cannot tell how to run",
		"ooxml":                       "is a folder",
		"scripts/root.sh":             "no file scripts/root.sh",
	} {
		r, err := run(script)
		if err == nil {
			t.Errorf("%s ran: %q", script, r.text())
			continue
		}
		if !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v; want it to say %q", script, err, why)
		}
	}

	// A missing script: did you mean, and the scripts the skill has.
	_, err = run("unpack.py")
	if !errors.Is(err, ErrNotScript) || !strings.Contains(err.Error(), "did you mean ooxml/scripts/unpack.py?") {
		t.Errorf("missing: %v", err)
	} else {
		msg := err.Error()
		for _, want := range []string{"fill.py", "sub/deep.sh", "root.sh", "tools/count.js", "ooxml/scripts/pack.py"} {
			if !strings.Contains(msg, want) {
				t.Errorf("missing: %v; want it to list %s", err, want)
			}
		}
		for _, not := range []string{"hooks/", "pre.py", "SKILL.md", "out.sh", "tools/t/", "notes.txt", "schema.xsd"} {
			if strings.Contains(msg, not) {
				t.Errorf("missing: %v; lists %s", err, not)
			}
		}
	}

	// Scripts the frontmatter declares outside scripts/ are listed with
	// those under it; load_skill's footer shows them.
	sk, err := l.Lookup("docx")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fill.py", "sub/deep.sh", "ooxml/scripts/pack.py", "ooxml/scripts/quiet.sh"} {
		if !slices.Contains(sk.Scripts, want) {
			t.Errorf("Scripts %v lack %s", sk.Scripts, want)
		}
	}
	footer := tool(t, NewServer(l), ctx, ToolLoad, map[string]string{"skill": "docx"}).text()
	if !strings.Contains(footer, "ooxml/scripts/pack.py (Pack a folder into a .docx);") {
		t.Errorf("load_skill footer:\n%s", footer)
	}
	var def struct {
		Description string `json:"description"`
		Schema      struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(toolDefs[ToolRun]), &def); err != nil {
		t.Fatal(err)
	}
	if d := def.Description + " " + def.Schema.Properties["script"].Description; !strings.Contains(d, "ooxml/scripts/unpack.py") {
		t.Errorf("run_skill_script says scripts/ only: %s", d)
	}
}

// FuzzScriptJail: whatever the path, run_skill_script resolves only to a
// file inside the skill folder that is neither SKILL.md nor a hook.
func FuzzScriptJail(f *testing.F) {
	for _, s := range []string{"x.py", "scripts/x.py", "ooxml/u.py", "SKILL.md", "hooks/pre.sh", "link.sh", "up.sh", "../ab/run.sh", "scripts/../hooks/pre.sh", "/etc/passwd", "tools/t/main.sh", "./x.py", "scripts/hookdir/pre.sh", "scripts/mdlink", "md.sh", "abs.sh"} {
		f.Add(s)
	}
	dir := f.TempDir()
	writeTree(f, dir, map[string]string{
		"secret.sh":              "echo SECRET\n",
		"ab/SKILL.md":            skillMD("ab", "Sibling."),
		"ab/run.sh":              "echo SIBLING\n",
		"a/SKILL.md":             skillMD("a", "The skill."),
		"a/scripts/x.py":         "print(1)\n",
		"a/ooxml/u.py":           "print(1)\n",
		"a/hooks/pre.sh":         "echo '{}'\n",
		"a/tools/t/tool.yaml":    "name: t\n",
		"a/tools/t/main.sh":      "echo t\n",
		"a/link.sh":              "->hooks/pre.sh",
		"a/md.sh":                "->SKILL.md",
		"a/up.sh":                "->../ab/run.sh",
		"a/abs.sh":               "->" + filepath.Join(dir, "secret.sh"),
		"a/scripts/hookdir":      "->../hooks",
		"a/scripts/mdlink":       "->../SKILL.md",
		"a/scripts/hooks/pre.sh": "echo '{}'\n",
	})
	l := openLib(f, Options{Dirs: []string{dir}})
	sk, err := l.Lookup("a")
	if err != nil {
		f.Fatal(err)
	}
	skDir, _ := filepath.EvalSymlinks(sk.Dir)
	md, _ := os.Stat(filepath.Join(sk.Dir, FileName))
	hook, _ := os.Stat(filepath.Join(sk.Dir, "hooks/pre.sh"))
	f.Fuzz(func(t *testing.T, p string) {
		entry, _, err := resolveScript(sk, l.Snapshot().hooks, p)
		if err != nil {
			if !errors.Is(err, ErrNotScript) {
				t.Fatalf("%q: %v is not ErrNotScript", p, err)
			}
			return
		}
		real, err := filepath.EvalSymlinks(filepath.Join(sk.Dir, entry))
		if err != nil {
			t.Fatalf("%q resolved to %s: %v", p, entry, err)
		}
		if r, err := filepath.Rel(skDir, real); err != nil || !filepath.IsLocal(r) {
			t.Fatalf("%q resolved to %s, outside the skill folder", p, real)
		}
		fi, err := os.Stat(real)
		if err != nil || os.SameFile(fi, md) || os.SameFile(fi, hook) || strings.HasPrefix(entry, "hooks/") || strings.HasPrefix(entry, "tools/t/") {
			t.Fatalf("%q resolved to %s (%s)", p, entry, real)
		}
	})
}
