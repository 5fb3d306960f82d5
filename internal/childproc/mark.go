package childproc

import (
	"bytes"
	"os/exec"
	"strings"
)

// TreeEnvPrefix begins the name of the variable that marks the tree of a
// child Start started (on Linux): SKILLGATE_TREE_<16 hex digits>=1, a name
// no other tree has. Every descendant inherits it, also one that left the
// child's process group and session or was re-parented to init, and the
// child's Group signals the processes that carry it. A child also gets the
// marks this process carries, and Env passes them on, so that the tree of
// whatever started this process holds what this process starts.
const TreeEnvPrefix = "SKILLGATE_TREE_"

// treeMarks returns the entries of environ that mark a tree.
func treeMarks(environ []string) []string {
	var marks []string
	for _, kv := range environ {
		if strings.HasPrefix(kv, TreeEnvPrefix) {
			marks = append(marks, kv)
		}
	}
	return marks
}

// environHas reports whether environ, a process's environment as
// /proc/PID/environ gives it (NUL-terminated entries), holds an entry
// starting with prefix.
func environHas(environ []byte, prefix string) bool {
	for len(environ) > 0 {
		entry, rest, _ := bytes.Cut(environ, []byte{0})
		if bytes.HasPrefix(entry, []byte(prefix)) {
			return true
		}
		environ = rest
	}
	return false
}

// Mark is the mark of the tree of a child started with StartMarked (see
// TreeEnvPrefix), for killing what the child left behind once it is gone.
type Mark struct{ m *mark }

// StartMarked starts cmd, as cmd.Start does, with a mark of its own in its
// environment and the marks this process carries, as Start does; it is
// for a child that code of its own reaps and signals, such as a plugin
// process go-plugin runs. It asks for no parent-death signal: use Start
// for one. Where no tree is marked (all systems but Linux) it only starts
// cmd, and the Mark's Kill does nothing.
func StartMarked(cmd *exec.Cmd) (*Mark, error) {
	m := markTree(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	m.rooted(cmd.Process.Pid)
	return &Mark{m: m}, nil
}

// Kill SIGKILLs every process that carries the mark, but this one, and
// again what they fork meanwhile: the child's descendants, also those
// that left its process group and session or outlived it. Call it once
// the child exited, before or after it was reaped. A nil Mark does
// nothing.
func (k *Mark) Kill() {
	if k != nil {
		k.m.kill()
	}
}
