package skills

import (
	"strings"
	"testing"
)

// TestFindStopWords: stop words in a query ("the", "use when") do not
// make every skill whose description has them a match.
func TestFindStopWords(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"pdf-forms/SKILL.md": skillMD("pdf-forms", "Fill PDF forms. Use when Claude needs to fill a form."),
		"slack-gif/SKILL.md": skillMD("slack-gif", "Create animated GIFs for Slack; use when the user asks for a gif."),
	})
	snap := openLib(t, Options{Dirs: []string{dir}, StateDir: t.TempDir()}).Snapshot()
	ms := snap.Find("fill the form, use when", "")
	if len(ms) != 1 || ms[0].Skill.ID != "pdf-forms" {
		var got []string
		for _, m := range ms {
			got = append(got, m.Skill.ID)
		}
		t.Errorf("matches %v, want pdf-forms alone", got)
	}
	if ms := snap.Find("the", ""); len(ms) != 0 {
		t.Errorf("a query of stop words alone finds %v", ms)
	}
}

// TestCardKeepsTrigger: a long description's card keeps its trigger
// clause ("Use when Claude needs to ..."), cut if need be, and stays
// about 30 tokens.
func TestCardKeepsTrigger(t *testing.T) {
	d := "Comprehensive PDF manipulation toolkit for extracting text and tables, creating new PDFs, merging and splitting documents, and handling forms. Use when Claude needs to fill in a PDF form or programmatically process, generate, or analyze PDF documents at scale."
	card := makeCard(&Skill{ID: "pdf", Meta: Meta{Description: d}})
	if !strings.Contains(card, "Use when Claude needs to fill in a PDF form") || !strings.HasPrefix(card, "pdf: Comprehensive PDF") || len(card) > 200 {
		t.Errorf("card (%d bytes): %s", len(card), card)
	}
	short := makeCard(&Skill{ID: "x", Meta: Meta{Description: "Short. Use when needed."}})
	if short != "x: Short. Use when needed." {
		t.Errorf("short card: %s", short)
	}
}
