package pipelines

import "strings"

// segment is a piece of a string value: literal text, or the source of one
// ${{ }} expression.
type segment struct {
	text   string // literal text, or the expression without ${{ }} and outer spaces
	off    int    // byte offset of text in the whole string
	isExpr bool
}

// templateError is a syntax error in a string's ${{ }} markup.
type templateError struct {
	off int // byte offset of the ${{ at fault
	msg string
}

func (e *templateError) Error() string { return e.msg }

// splitTemplate cuts s into literal text and ${{ expr }} segments. An
// expression ends at the first }} outside string literals and braces, so
// map literals and strings containing }} need no escaping.
func splitTemplate(s string) ([]segment, error) {
	var segs []segment
	i := 0
	for {
		start := strings.Index(s[i:], "${{")
		if start < 0 {
			if i < len(s) {
				segs = append(segs, segment{text: s[i:], off: i})
			}
			return segs, nil
		}
		start += i
		if start > i {
			segs = append(segs, segment{text: s[i:start], off: i})
		}
		end, err := exprEnd(s, start+3)
		if err != nil {
			return nil, &templateError{off: start, msg: err.Error()}
		}
		body := s[start+3 : end]
		trimmed := strings.TrimLeft(body, " \t\r\n")
		off := start + 3 + len(body) - len(trimmed)
		trimmed = strings.TrimRight(trimmed, " \t\r\n")
		if trimmed == "" {
			return nil, &templateError{off: start, msg: "empty ${{ }}; write an expression inside, such as ${{ inputs.name }}"}
		}
		segs = append(segs, segment{text: trimmed, off: off, isExpr: true})
		i = end + 2
	}
}

// exprEnd returns the index of the }} closing an expression that starts at i.
func exprEnd(s string, i int) (int, error) {
	depth := 0
	for i < len(s) {
		c := s[i]
		switch c {
		case '"', '\'', '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return 0, errString("unterminated string literal in ${{ }}; close the quote " + string(c))
			}
			i = j + 1
			continue
		case '{':
			depth++
		case '}':
			if depth == 0 {
				if i+1 < len(s) && s[i+1] == '}' {
					return i, nil
				}
				return 0, errString("unbalanced } in ${{ }}; an expression ends with }}")
			}
			depth--
		}
		i++
	}
	return 0, errString("unterminated ${{; close the expression with }}")
}

type errString string

func (e errString) Error() string { return string(e) }
