package oneline

import (
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  two\n\tlines  ", 10, "two lines"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"héllo wörld", 8, "héllo w…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
	} {
		got := Cut(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) || utf8.RuneCountInString(got) > max(tc.n, 0) {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestClean: what a terminal would act on (escape sequences, C1 and other
// control characters, bidirectional overrides, bytes that are not UTF-8)
// comes out as visible escapes, in Cut too; printable text, non-ASCII
// letters and U+FFFD stay as they are.
func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain tool", "plain tool"},
		{"héllo 日本 \ufffd", "héllo 日本 \ufffd"},
		{"evil\x1b[2J\x1b[31mPWNED\x1b[0m\rdone", `evil\x1b[2J\x1b[31mPWNED\x1b[0m done`},
		{"bell\x07 nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`},
		{"c1 \u009b31m osc\u009d0;title\u009c", `c1 \u009b31m osc\u009d0;title\u009c`},
		{"bad \x9b byte", `bad \x9b byte`},
		{"safe\u202egnp.exe", `safe\u202egnp.exe`},
		{"iso\u2066late\u2069 \u200e\u200f\u061c", `iso\u2066late\u2069 \u200e\u200f\u061c`},
	} {
		if got := Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Cut(tc.in, 200); got != tc.want {
			t.Errorf("Cut(%q, 200) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
