// Package pos is a place in a file, written the way compilers and editors
// expect it: "file:line:col". The config, tool.yaml-like files and pipeline
// loaders all report problems with it.
package pos

import "strconv"

// Pos is a place in a file. Line and Col count from 1; zero means unknown.
type Pos struct {
	File string
	Line int
	Col  int
}

// String returns "file:line:col", leaving out what is unknown.
func (p Pos) String() string {
	s := p.File
	if p.Line > 0 {
		if s != "" {
			s += ":"
		}
		s += strconv.Itoa(p.Line)
		if p.Col > 0 {
			s += ":" + strconv.Itoa(p.Col)
		}
	}
	return s
}
