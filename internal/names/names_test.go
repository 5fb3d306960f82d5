package names

import (
	"regexp"
	"strings"
	"testing"
)

var want = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestValidMatchesTheRule(t *testing.T) {
	for _, s := range []string{"", "a", "A-z_9", "has space", "dot.ted", "ünï", strings.Repeat("x", 64), strings.Repeat("x", 65), "tab\t", "-", "_"} {
		if got := Valid(s); got != want.MatchString(s) {
			t.Errorf("Valid(%q) = %v, want %v", s, got, !got)
		}
	}
}

func FuzzValid(f *testing.F) {
	f.Add("tool_name")
	f.Add("x.y")
	f.Fuzz(func(t *testing.T, s string) {
		if got := Valid(s); got != want.MatchString(s) {
			t.Fatalf("Valid(%q) = %v, the rule says %v", s, got, !got)
		}
	})
}
