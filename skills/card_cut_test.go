package skills

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCardCutsAtTheEnd: a card that must cut a long description keeps
// the description's first sentence whole when it fits with the trigger
// clause ("Use when ..."), and cuts the end of the clause rather than
// the middle of the first sentence.
func TestCardCutsAtTheEnd(t *testing.T) {
	for _, c := range []struct {
		desc     string
		want     string // the card's description starts with it
		notWant  string
		maxRunes int
	}{
		{"Count words, lines and the most frequent words of a text. Use when the user pastes a text and asks about its size or vocabulary.",
			"Count words, lines and the most frequent words of a text. Use when the user pastes a text", "frequent words… Use", cardChars + 2},
		{"Fill PDF forms: read the fields, fill them from JSON and check the result against the form's rules before saving it anywhere. Use when Claude needs to fill a PDF form.",
			"Fill PDF forms: read the fields", "", cardChars + 2},
	} {
		sk := &Skill{ID: "s", Meta: Meta{Name: "s", Description: c.desc}}
		card := strings.TrimPrefix(makeCard(sk), "s: ")
		if !strings.HasPrefix(card, c.want) || (c.notWant != "" && strings.Contains(card, c.notWant)) {
			t.Errorf("card %q\nwant it to start %q", card, c.want)
		}
		if !strings.Contains(strings.ToLower(card), "use when") {
			t.Errorf("card %q lost its trigger clause", card)
		}
		if n := utf8.RuneCountInString(card); n > c.maxRunes {
			t.Errorf("card %q is %d characters, more than %d", card, n, c.maxRunes)
		}
	}
}
