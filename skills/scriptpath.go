package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	if hint := argsHint(sk, global, script); hint != "" {
		return "", "", &notScriptError{msg + "; " + hint}
	}
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

// argsHint tells a script path that carries its command line ("scripts/wc.py
// 5", "bash scripts/count.sh") to name the script alone and put the
// arguments in args, when one of its words is a script of sk; else "".
func argsHint(sk *Skill, global hookSet, script string) string {
	words := strings.Fields(script)
	if len(words) < 2 {
		return ""
	}
	for i, w := range words {
		c, err := cleanRel(w)
		if err != nil {
			continue
		}
		cands := []string{c}
		if !strings.HasPrefix(c, "scripts/") {
			cands = []string{"scripts/" + c, c}
		}
		for _, cand := range cands {
			if why, err := checkScript(sk, global, cand); why != "" || err != nil {
				continue
			}
			args, _ := json.Marshal(append([]string{}, words[i+1:]...))
			hint := fmt.Sprintf("script names the file alone and args holds its arguments: call again with script %q with args %s", w, args)
			if i > 0 {
				hint += fmt.Sprintf("; the gateway picks the interpreter from the file's extension or #! line, so leave %q out", strings.Join(words[:i], " "))
			}
			return hint
		}
	}
	return ""
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

// declaredScripts lists the scripts of sk outside scripts/, relative to
// the skill folder and sorted: the scripts: keys of its frontmatter that
// name no file under scripts/ but a file run_skill_script runs elsewhere
// in the folder (ooxml/scripts/pack.py), and the other files there it
// runs (a script's extension, or executable: Anthropic's docx skill keeps
// ooxml/scripts/unpack.py). under is the files under scripts/, relative
// to it. The walk looks at most at maxSuggestWalk entries; the scan calls
// it once per changed tree.
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
	walkRunnable(sk, hookSet{}, func(rel string) bool {
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
		return len(out) < maxScripts
	})
	slices.Sort(out)
	return out
}

// skillScripts lists the scripts of sk as run_skill_script takes them:
// sk.Scripts, then the files with a script's extension (or executable)
// elsewhere in its folder that global's hooks do not take, at most
// maxSuggest. Only the error of a missing script calls it.
func skillScripts(sk *Skill, global hookSet) []string {
	out := slices.Clone(sk.Scripts[:min(len(sk.Scripts), maxSuggest)])
	if len(out) < maxSuggest {
		walkRunnable(sk, global, func(rel string) bool {
			if !slices.Contains(out, rel) {
				out = append(out, rel)
			}
			return len(out) < maxSuggest
		})
	}
	return out
}

// walkRunnable calls found with each file outside scripts/ of sk's
// folder that run_skill_script runs (see looksRunnable and checkScript),
// relative to the folder, until found returns false, looking at most at
// maxSuggestWalk entries.
func walkRunnable(sk *Skill, global hookSet, found func(rel string) bool) {
	seen := 0
	_ = filepath.WalkDir(sk.Dir, func(p string, d os.DirEntry, err error) error {
		seen++
		switch {
		case seen > maxSuggestWalk:
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
		if skipName(d.Name()) || rel == FileName || !looksRunnable(d) {
			return nil
		}
		if why, err := checkScript(sk, global, rel); why == "" && err == nil && !found(rel) {
			return filepath.SkipAll
		}
		return nil
	})
}

// looksRunnable reports whether a file's name or mode says it is a script.
func looksRunnable(d os.DirEntry) bool {
	if slices.Contains(scriptExts, strings.ToLower(path.Ext(d.Name()))) {
		return true
	}
	fi, err := d.Info()
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// ScriptProblems warns about the scripts of sk that cannot run as they
// are, each with the script's path (absolute) and what to do: an
// executable without a #! line or an extension that names its
// interpreter (the run fails with "exec format error"), and a link under
// scripts/ that leads out of the skill folder or to nothing
// (run_skill_script refuses it).
func ScriptProblems(sk *Skill) []Problem {
	var out []Problem
	for i, sc := range sk.Scripts {
		rel := sc
		if i < sk.nScripts {
			rel = "scripts/" + sc
		}
		if msg := noInterpreter(sk.Dir, rel); msg != "" {
			out = append(out, Problem{Path: filepath.Join(sk.Dir, filepath.FromSlash(rel)), Warning: true, Msg: msg})
		}
	}
	scripts := filepath.Join(sk.Dir, "scripts")
	seen := 0
	_ = filepath.WalkDir(scripts, func(p string, d os.DirEntry, err error) error {
		seen++
		switch {
		case seen > maxSuggestWalk:
			return filepath.SkipAll
		case err != nil || d.Type()&os.ModeSymlink == 0:
			return nil
		}
		r, err := filepath.Rel(sk.Dir, p)
		if err != nil {
			return nil
		}
		rel := filepath.ToSlash(r)
		f, _, err := openInSkill(sk.Dir, rel)
		if err == nil {
			f.Close()
			return nil
		}
		target, _ := os.Readlink(p)
		var msg string
		switch {
		case errors.Is(err, ErrNotFound):
			msg = fmt.Sprintf("%s is a link to %s, which does not exist; run_skill_script cannot run it: point the link at a file in the skill folder instead, or remove it", rel, target)
		case strings.Contains(err.Error(), "leads out"):
			msg = fmt.Sprintf("%s is a link to %s, outside the skill folder: run_skill_script refuses it, as skills run only files inside their own folder; copy the script into the skill folder instead of linking to it", rel, target)
		default:
			return nil
		}
		out = append(out, Problem{Path: p, Warning: true, Msg: msg})
		return nil
	})
	return out
}

// noInterpreter says why the script at rel in dir cannot be started when
// it is executable with neither a known extension nor a #! line (nor an
// ELF header), or returns "".
func noInterpreter(dir, rel string) string {
	if slices.Contains(scriptExts, strings.ToLower(path.Ext(rel))) {
		return ""
	}
	f, fi, err := openInSkill(dir, rel)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi.Mode()&0o111 == 0 {
		return ""
	}
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if head = head[:n]; bytes.HasPrefix(head, []byte("#!")) || bytes.Equal(head, []byte("\x7fELF")) {
		return ""
	}
	return fmt.Sprintf("%s is executable but has no #! line and no extension naming its interpreter (%s), so running it fails with \"exec format error\"; add a first line such as #!/bin/sh or #!/usr/bin/env python3, or give it its interpreter's extension instead",
		rel, strings.Join(scriptExts, ", "))
}
