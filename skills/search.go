package skills

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// term is a word a skill is found by, stemmed, with its weight: 3 in the
// ID or name, 2 in a tag, 1 in the description.
type term struct {
	word   string
	weight float64
}

// keywords are the terms of a skill, each once with its highest weight.
func keywords(sk *Skill) []term {
	var out []term
	add := func(s string, w float64) {
		for _, x := range words(s) {
			x = stem(x)
			i := slices.IndexFunc(out, func(t term) bool { return t.word == x })
			if i < 0 {
				out = append(out, term{x, w})
			} else if out[i].weight < w {
				out[i].weight = w
			}
		}
	}
	add(sk.ID, 3)
	for _, t := range sk.Meta.Tags {
		add(t, 2)
	}
	add(sk.Meta.Description, 1)
	return out
}

// words are the words of s, in lower case, without stop words ("a",
// "the", "use when": every description has them, so they rank nothing).
func words(s string) []string {
	all := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	return slices.DeleteFunc(all, func(w string) bool { return stopWords[w] })
}

// stopWords are words too common in descriptions and queries to find a
// skill by.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "for": true,
	"and": true, "or": true, "with": true, "by": true, "from": true, "is": true, "it": true, "its": true,
	"this": true, "that": true, "as": true, "at": true, "be": true, "me": true, "my": true, "i": true,
	"you": true, "your": true, "we": true, "our": true, "into": true, "can": true, "will": true,
	"please": true, "some": true, "use": true, "used": true, "using": true, "via": true, "are": true,
	"do": true, "does": true, "how": true, "what": true, "which": true, "should": true, "if": true,
	"then": true, "when": true, "need": true, "needs": true, "claude": true, "user": true, "asks": true,
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
// description; prefixes count a little; stop words not at all). An empty
// query returns every skill in ID order. tag, when set, keeps only skills with that tag.
func (s *Snapshot) Find(query, tag string) []Match {
	qs := words(query)
	if len(qs) == 0 && strings.TrimSpace(query) != "" {
		return nil // stop words alone find nothing, rather than everything
	}
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
	total := 0.0
	for _, q := range qs {
		best := 0.0
		for _, t := range sk.keywords {
			switch {
			case t.word == q:
				best = max(best, t.weight)
			case len(q) >= 3 && strings.HasPrefix(t.word, q):
				best = max(best, t.weight/2)
			}
		}
		total += best
	}
	return total
}
