package skills

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// keywords are the words a skill is found by: its ID, name and tags
// (weighted) and its description.
func keywords(sk *Skill) []string {
	var out []string
	add := func(s string) {
		for _, w := range words(s) {
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	add(sk.ID)
	for _, t := range sk.Meta.Tags {
		add(t)
	}
	add(sk.Meta.Description)
	return out
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// stem trims common English endings so "forms" finds "form".
func stem(w string) string {
	for _, suf := range []string{"ing", "es", "ed", "s"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// Match is one result of Find.
type Match struct {
	Skill *Skill
	Score float64
}

// Find ranks the snapshot's skills against query: every word of the query
// scores where it appears (ID and name count most, then tags, then the
// description; prefixes count a little). An empty query returns every
// skill in ID order. tag, when set, keeps only skills with that tag.
func (s *Snapshot) Find(query, tag string) []Match {
	qs := words(query)
	for i, q := range qs {
		qs[i] = stem(q)
	}
	var out []Match
	for _, sk := range s.skills {
		if tag != "" && !slices.ContainsFunc(sk.Meta.Tags, func(t string) bool { return strings.EqualFold(t, tag) }) {
			continue
		}
		if len(qs) == 0 {
			out = append(out, Match{Skill: sk})
			continue
		}
		if sc := score(sk, qs); sc > 0 {
			out = append(out, Match{Skill: sk, Score: sc})
		}
	}
	if len(qs) > 0 {
		slices.SortStableFunc(out, func(a, b Match) int { return cmp.Compare(b.Score, a.Score) })
	}
	return out
}

func score(sk *Skill, qs []string) float64 {
	name := words(sk.ID)
	var tags []string
	for _, t := range sk.Meta.Tags {
		tags = append(tags, words(t)...)
	}
	total := 0.0
	for _, q := range qs {
		best := 0.0
		for _, w := range sk.keywords {
			sw := stem(w)
			var sc float64
			switch {
			case sw == q:
				sc = 1
			case len(q) >= 3 && strings.HasPrefix(sw, q):
				sc = 0.5
			default:
				continue
			}
			switch {
			case slices.Contains(name, w):
				sc *= 3
			case slices.Contains(tags, w):
				sc *= 2
			}
			best = max(best, sc)
		}
		total += best
	}
	return total
}
