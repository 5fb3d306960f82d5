package config

import (
	"fmt"
	"strings"
)

// Expand replaces ${VAR} with the value lookup finds and ${VAR:-default}
// with the default when VAR is unset or empty; the default may itself hold
// references. $${ stands for a literal ${, and a $ before anything else is
// kept as is. A nil lookup finds nothing. An unset VAR without a default is
// an error wrapping ErrUndefinedVariable.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := closingBrace(s, i+2)
		if end < 0 {
			return "", fmt.Errorf("unterminated %q; close it with } or write $${ for a literal ${", s[i:])
		}
		v, err := expandRef(s[i+2:end], lookup)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
		s = s[end+1:]
	}
}

// closingBrace returns the index of the } that closes a ${ whose body
// starts at i, skipping nested ${...}, or -1.
func closingBrace(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch {
		case s[i] == '}' && depth == 0:
			return i
		case s[i] == '}':
			depth--
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			depth++
			i++
		}
	}
	return -1
}

// expandRef resolves the body of one ${...}: NAME or NAME:-default.
func expandRef(ref string, lookup func(string) (string, bool)) (string, error) {
	name, def, hasDef := strings.Cut(ref, ":-")
	if !validVarName(name) {
		if kind, _, ok := strings.Cut(name, ":"); ok && validVarName(kind) {
			// ${env:NAME}, ${input:id}: VS Code's and Cursor's.
			return "", fmt.Errorf("invalid variable reference ${%s}: that is an MCP client's syntax; write ${NAME} for a variable, "+
				"or convert the client's config with `skillgate import FILE`, which rewrites these", ref)
		}
		return "", fmt.Errorf("invalid variable reference ${%s}; write ${NAME} or ${NAME:-default} (NAME is letters, digits and _), or $${ for a literal ${", ref)
	}
	var v string
	ok := false
	if lookup != nil {
		v, ok = lookup(name)
	}
	switch {
	case hasDef && (!ok || v == ""):
		return Expand(def, lookup)
	case !ok:
		return "", fmt.Errorf("%w ${%s}; set %s in the environment or give a default: ${%s:-value}", ErrUndefinedVariable, name, name, name)
	}
	return v, nil
}

func validVarName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
