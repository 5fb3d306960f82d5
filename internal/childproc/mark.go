package childproc

import (
	"bytes"
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
