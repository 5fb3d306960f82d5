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
