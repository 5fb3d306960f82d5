// Package yamldoc reads YAML that people write by hand, for the loaders of
// skillgate.yaml, pipeline files and tool.yaml: it says where a syntax error
// really is, with what to do about it, and keeps aliases from multiplying
// the work of walking a document ("billion laughs"). Each loader wraps a
// Problem in its own error type.
//
//	var doc yaml.Node
//	if err := yaml.Unmarshal(data, &doc); err != nil {
//		p := yamldoc.Syntax(err, data)
//		fmt.Printf("%s:%d:%d: invalid YAML: %s\n", name, p.Line, p.Col, p.Msg)
//	}
//	for _, p := range yamldoc.Aliases(&doc) {
//		fmt.Printf("%s:%d:%d: %s: %s\n", name, p.Line, p.Col, p.Field, p.Msg)
//	}
package yamldoc

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Problem is something wrong with a YAML document, at a place in it.
type Problem struct {
	// Line and Col count from 1; zero means unknown.
	Line, Col int
	// Field is the path of the value, such as "steps[0].with"; empty for
	// the document itself and for syntax errors.
	Field string
	// Msg says what is wrong and what to do about it.
	Msg string
}

// UTF8 returns a problem at the first byte of data that is not UTF-8, if
// any. Text with a UTF-16 byte order mark is left to yaml.v3, which reads it.
func UTF8(data []byte) (Problem, bool) {
	if utf8.Valid(data) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return Problem{}, false
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			line, col := lineCol(data, i)
			return Problem{Line: line, Col: col,
				Msg: fmt.Sprintf("byte 0x%02x is not UTF-8; the file must be UTF-8 text: save it as UTF-8, or fix the characters here", data[i])}, true
		}
		i += size
	}
	return Problem{}, false
}

// lineCol returns the 1-based line and column (in characters, as yaml.v3
// counts them) of offset off in data.
func lineCol(data []byte, off int) (int, int) {
	before := data[:off]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[start:]) + 1
}
