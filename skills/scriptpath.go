package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds of the walk that lists a skill's scripts for the error of a
// script it does not have (the only place the whole folder is walked
// for scripts).
const (
	maxSuggestWalk = 4096 // folder entries looked at
	maxSuggest     = 64   // scripts listed
)

// scriptExts are the extensions runtimeOf knows.
var scriptExts = []string{".py", ".js", ".mjs", ".cjs", ".sh", ".bash", ".rb"}

// resolveScript finds the file a run_skill_script path names in sk's
// folder: under scripts/ first ("fill.py" is scripts/fill.py), then
// relative to the skill folder ("ooxml/scripts/unpack.py", "run.sh" at
// its root); a path starting scripts/ is looked for there only. It returns
// the file's path in the skill folder and the key of its policy in the
// frontmatter's scripts: (the path under scripts/ for a file there, else
// the path in the skill folder). The file is opened through the skill
// folder's jail, and SKILL.md, hooks (hooks/ and global hook files) and
// files of tool folders are refused.
func resolveScript(sk *Skill, global hookSet, script string) (entry, key string, err error) {
	clean, err := cleanRel(script)
	if err != nil {
		return "", "", fmt.Errorf("%w %s: %w", ErrNotScript, sk.ID, err)
	}
	cands := []string{clean}
	if !strings.HasPrefix(clean, "scripts/") {
		cands = []string{"scripts/" + clean, clean}
	}
	for _, c := range cands {
		why, err := checkScript(sk, global, c)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return "", "", fmt.Errorf("%w %s: %s: %s", ErrNotScript, sk.ID, c, jailMsg(err))
		case why != "":
			return "", "", fmt.Errorf("%w %s: %s", ErrNotScript, sk.ID, why)
		}
		return c, scriptKeyOf(c), nil
	}
	looked := cands[0]
	if len(cands) > 1 {
		looked = cands[0] + ", then " + cands[1] + " in the skill folder"
	}
	msg := fmt.Sprintf("%v %s: no file %s (looked for %s)", ErrNotScript, sk.ID, clean, looked)
	have := skillScripts(sk, global)
	var near []string
	for _, s := range have {
		if path.Base(s) == path.Base(clean) {
			near = append(near, s)
		}
	}
	switch {
	case len(have) == 0:
		msg += "; the skill has no scripts"
	case len(have) >= maxSuggest:
		msg += "; its scripts include " + strings.Join(have, ", ")
	default:
		msg += "; its scripts are " + strings.Join(have, ", ")
	}
	if len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return "", "", &notScriptError{msg}
}

// notScriptError is ErrNotScript with a message of its own.
type notScriptError struct{ msg string }

func (e *notScriptError) Error() string { return e.msg }
func (e *notScriptError) Unwrap() error { return ErrNotScript }

// scriptKeyOf is the key in the frontmatter's scripts: of the script at
// rel in the skill folder.
func scriptKeyOf(rel string) string {
	if k, ok := strings.CutPrefix(rel, "scripts/"); ok {
		return k
	}
	return rel
}

// checkScript checks that rel (cleaned, relative to sk's folder) is a
// file run_skill_script may run. why says why it may not: it is
// SKILL.md, under hooks/ or a tool folder, or a hook file (of the skill,
// or global) reached by a link. err is the jail's: no such file
// (ErrNotFound), a folder, a link leading out of the skill folder.
func checkScript(sk *Skill, global hookSet, rel string) (why string, err error) {
	if why := notScriptPath(sk.Dir, rel); why != "" {
		return why, nil
	}
	f, fi, err := openInSkill(sk.Dir, rel)
	if err != nil {
		return "", err
	}
	f.Close()
	if same(fi, filepath.Join(sk.Dir, FileName)) {
		return rel + " is a link to the skill's SKILL.md, which holds its instructions, not a script", nil
	}
	for _, h := range slices.Concat(sk.hooks.pre, sk.hooks.post, global.pre, global.post) {
		if same(fi, h) {
			name := filepath.Base(h)
			if r, err := filepath.Rel(sk.Dir, h); err == nil && filepath.IsLocal(r) {
				name = filepath.ToSlash(r)
			}
			return fmt.Sprintf("%s is a link to the hook %s; hooks run around scripts, by the gateway only", rel, name), nil
		}
	}
	return "", nil
}

// notScriptPath says why rel (cleaned) names no script by its path
// alone, or returns "".
func notScriptPath(dir, rel string) string {
	if rel == FileName {
		return FileName + " holds the skill's instructions, not a script"
	}
	seg := strings.Split(rel, "/")
	switch {
	case seg[0] == "hooks":
		return rel + " is under hooks/, whose files the gateway runs around scripts; hooks are not run as scripts"
	case seg[0] == "tools" && len(seg) > 2 && fileExists(filepath.Join(dir, "tools", seg[1], "tool.yaml")):
		return fmt.Sprintf("tools/%s is a tool folder (its tool.yaml sets how it runs); activate the skill and call its tool instead", seg[1])
	}
	return ""
}

func same(fi fs.FileInfo, p string) bool {
	o, err := os.Stat(p)
	return err == nil && os.SameFile(fi, o)
}

// declaredScripts lists the scripts: keys of sk's frontmatter that name
// no file under scripts/ but a file run_skill_script runs elsewhere in
// the skill folder (ooxml/scripts/pack.py), sorted. under is the files
// under scripts/, relative to it. One open per such key: cheap enough
// for every scan.
func declaredScripts(sk *Skill, under []string) []string {
	var out []string
	for k := range sk.Meta.Scripts {
		if slices.Contains(under, k) || len(out) >= maxScripts {
			continue
		}
		if c, err := cleanRel(k); err != nil || c != k {
			continue
		}
		if why, err := checkScript(sk, hookSet{}, k); why != "" || err != nil {
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// skillScripts lists the scripts of sk as run_skill_script takes them:
// sk.Scripts, then the files with a script's extension (or executable)
// elsewhere in its folder, at most maxSuggest, looking at most at
// maxSuggestWalk entries. It walks the folder, so only the error of a
// missing script calls it.
func skillScripts(sk *Skill, global hookSet) []string {
	out := slices.Clone(sk.Scripts[:min(len(sk.Scripts), maxSuggest)])
	seen := 0
	_ = filepath.WalkDir(sk.Dir, func(p string, d os.DirEntry, err error) error {
		seen++
		switch {
		case seen > maxSuggestWalk || len(out) >= maxSuggest:
			return filepath.SkipAll
		case err != nil || p == sk.Dir:
			return nil
		}
		r, err := filepath.Rel(sk.Dir, p)
		if err != nil {
			return nil
		}
		rel := filepath.ToSlash(r)
		if d.IsDir() {
			// scripts/ is listed already; hooks/ and tool folders hold
			// no scripts (notScriptPath refuses any file in them).
			if skipName(d.Name()) || rel == "scripts" || notScriptPath(sk.Dir, rel+"/x") != "" {
				return filepath.SkipDir
			}
			return nil
		}
		if skipName(d.Name()) || !looksRunnable(d) || slices.Contains(out, rel) {
			return nil
		}
		if why, err := checkScript(sk, global, rel); why == "" && err == nil {
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// looksRunnable reports whether a file's name or mode says it is a script.
func looksRunnable(d os.DirEntry) bool {
	if slices.Contains(scriptExts, strings.ToLower(path.Ext(d.Name()))) {
		return true
	}
	fi, err := d.Info()
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
