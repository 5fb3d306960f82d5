// Package oneline puts text on one line of bounded width, for table cells
// and error hints:
//
//	oneline.Cut("Fetch a URL\nand return   its body", 20) // "Fetch a URL and re…"
package oneline

import (
	"strings"
	"unicode/utf8"
)

// Cut returns s with each run of white space (newlines included) made one
// space, cut to at most n characters, the last of them "…" when it was cut.
// It never cuts a character in two.
func Cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	end := 0
	for range n - 1 {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	return s[:end] + "…"
}
