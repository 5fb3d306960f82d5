// Package oneline puts text on one line of bounded width, for table cells
// and error hints, safe to print on a terminal:
//
//	oneline.Cut("Fetch a URL\nand return   its body", 20) // "Fetch a URL and re…"
//	oneline.Clean("evil\x1b[2J")                         // `evil\x1b[2J`
package oneline

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Cut returns Clean(s) cut to at most n characters, the last of them "…"
// when it was cut. It never cuts a character in two.
func Cut(s string, n int) string {
	s = Clean(s)
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

// Clean returns s on one line and inert on a terminal: each run of white
// space (newlines included) becomes one space, and what a terminal would
// act on rather than show is written as a Go escape: the other control
// characters (ESC, which starts the sequences that move the cursor, clear
// the screen or set a window's title; C1, DEL), the bidirectional
// overrides and isolates that reorder what follows (U+202A-U+202E,
// U+2066-U+2069, and the marks U+200E, U+200F, U+061C), and bytes that are
// not UTF-8 (a lone 0x9B is a CSI to some terminals).
func Clean(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && inert(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case inert(r):
			b.WriteString(s[i : i+size])
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether s holds anything Clean escapes.
func needsEscape(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !inert(r) {
			return true // RuneError: an invalid byte, or U+FFFD itself (kept as it is)
		}
	}
	return false
}

// inert reports whether r shows as itself on a terminal.
func inert(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
		return false
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return false
	}
	return true
}
