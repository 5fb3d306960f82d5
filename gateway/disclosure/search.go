package disclosure

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/skillgate/skillgate/gateway/catalog"
)

// The ranking is BM25F: each field of a tool (name, title, description,
// parameter names and descriptions, server, skill, tags) is a bag of stemmed
// terms with a weight; a term's frequency in a document is the weighted sum
// of its length-normalized frequencies per field, and a document's score is
// the sum, over the query's terms, of idf(term) * tf*(k1+1)/(tf+k1).
// Everything but the final sum is computed when the index is built, so a
// query costs one map lookup and one pass over a posting list per term.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// prefixWeight scales matches of a query term that is only a prefix of
	// an indexed term ("calend" -> "calendar").
	prefixWeight = 0.4
)

// field is one searchable part of a tool and its weight.
type field struct {
	weight float64
	text   func(d *doc) []string
}

// doc is one indexed tool.
type doc struct {
	item   *catalog.Item
	server string // the item's source
	params []string
	pdesc  []string
	tags   []string
	card   string // one-line description for find_tools
	// boost scales the doc's score: the gateway's own plumbing tools
	// (source "gateway:..."; read_artifact, the admin groups) rank below
	// the tools of servers, which are what a query is after.
	boost float32
}

// gatewayBoost is the boost of the gateway's own tools.
const gatewayBoost = 0.4

var fields = []field{
	{3.0, func(d *doc) []string { return []string{d.item.Name, d.item.Original} }},
	{2.0, func(d *doc) []string { return []string{d.item.Title} }},
	{1.0, func(d *doc) []string { return []string{d.item.Description} }},
	{1.5, func(d *doc) []string { return d.params }},
	{0.5, func(d *doc) []string { return d.pdesc }},
	{2.0, func(d *doc) []string { return []string{d.server, d.item.Skill, d.item.Group} }},
	{2.0, func(d *doc) []string { return d.tags }},
}

type posting struct {
	doc   int32
	score float32 // idf * saturated tf, final for this term and doc
}

// index is the search index of one catalog snapshot's tools. It is
// immutable once built.
type index struct {
	docs  []doc
	terms map[string][]posting
	vocab []string // sorted, for prefix matches
	byNam map[string]int
}

// buildIndex indexes the tools of snap.
func buildIndex(snap *catalog.Snapshot) *index {
	tools := snap.Tools()
	ix := &index{docs: make([]doc, len(tools)), terms: map[string][]posting{}, byNam: make(map[string]int, len(tools))}
	// per field: term counts per doc and lengths
	type fieldTerms struct {
		counts map[string]int
		length int
	}
	per := make([][]fieldTerms, len(tools))
	avg := make([]float64, len(fields))
	for i, it := range tools {
		d := &ix.docs[i]
		d.item = it
		d.server = it.Source
		d.params, d.pdesc, d.tags = toolParts(it.Raw)
		d.card = cardText(it.Description, it.Title)
		d.boost = 1
		if strings.HasPrefix(it.Source, "gateway:") {
			d.boost = gatewayBoost
		}
		ix.byNam[it.Name] = i
		per[i] = make([]fieldTerms, len(fields))
		for f, fl := range fields {
			ft := fieldTerms{counts: map[string]int{}}
			for _, s := range fl.text(d) {
				for _, t := range terms(s) {
					ft.counts[t]++
					ft.length++
				}
			}
			per[i][f] = ft
			avg[f] += float64(ft.length)
		}
	}
	n := float64(len(tools))
	for f := range avg {
		if n > 0 {
			avg[f] /= n
		}
		if avg[f] == 0 {
			avg[f] = 1
		}
	}
	// weighted, length-normalized tf per (term, doc)
	wtf := map[string]map[int32]float64{}
	for i := range tools {
		for f, ft := range per[i] {
			norm := (1 - bm25B) + bm25B*float64(ft.length)/avg[f]
			for t, c := range ft.counts {
				m := wtf[t]
				if m == nil {
					m = map[int32]float64{}
					wtf[t] = m
				}
				m[int32(i)] += fields[f].weight * float64(c) / norm
			}
		}
	}
	for t, m := range wtf {
		df := float64(len(m))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		ps := make([]posting, 0, len(m))
		for d, tf := range m {
			ps = append(ps, posting{doc: d, score: float32(idf * tf * (bm25K1 + 1) / (tf + bm25K1))})
		}
		slices.SortFunc(ps, func(a, b posting) int { return int(a.doc - b.doc) })
		ix.terms[t] = ps
		ix.vocab = append(ix.vocab, t)
	}
	slices.Sort(ix.vocab)
	return ix
}

// hit is one ranked result.
type hit struct {
	doc   int
	score float32
}

// accumulators are reused across searches: a query touches a few
// posting lists, and a dense array beats a map at that.
var accumulators = sync.Pool{New: func() any { return new(accumulator) }}

type accumulator struct {
	scores  []float32
	touched []int32
}

// search ranks the docs accepted by keep against query and returns the
// best top (all when top <= 0), and how many docs matched. An empty query
// matches every accepted doc, by name.
func (ix *index) search(query string, keep func(*doc) bool, top int) ([]hit, int) {
	qt := terms(query)
	if len(qt) == 0 {
		out := make([]hit, 0, 16)
		total := 0
		for i := range ix.docs {
			if keep(&ix.docs[i]) {
				total++
				if top <= 0 || len(out) < top {
					out = append(out, hit{doc: i})
				}
			}
		}
		return out, total // snapshot tools are already sorted by name
	}
	acc := accumulators.Get().(*accumulator)
	defer accumulators.Put(acc)
	if cap(acc.scores) < len(ix.docs) {
		acc.scores = make([]float32, len(ix.docs))
	}
	scores := acc.scores[:len(ix.docs)]
	touched := acc.touched[:0]
	add := func(d int32, s float32) {
		if scores[d] == 0 {
			touched = append(touched, d)
		}
		scores[d] += s
	}
	for n, t := range qt {
		if slices.Contains(qt[:n], t) {
			continue
		}
		if ps, ok := ix.terms[t]; ok {
			for _, p := range ps {
				add(p.doc, p.score)
			}
			continue
		}
		if len(t) < 3 {
			continue
		}
		// No exact term: credit the best indexed term it is a prefix of.
		lo := sort.SearchStrings(ix.vocab, t)
		hi := lo
		for hi < len(ix.vocab) && strings.HasPrefix(ix.vocab[hi], t) {
			hi++
		}
		if hi == lo+1 {
			for _, p := range ix.terms[ix.vocab[lo]] {
				add(p.doc, p.score*prefixWeight)
			}
			continue
		}
		best := map[int32]float32{}
		for _, v := range ix.vocab[lo:hi] {
			for _, p := range ix.terms[v] {
				if s := p.score * prefixWeight; s > best[p.doc] {
					best[p.doc] = s
				}
			}
		}
		for d, s := range best {
			add(d, s)
		}
	}
	// A query that is a tool's exact name ranks that tool first.
	if i, ok := ix.byNam[strings.TrimSpace(query)]; ok {
		add(int32(i), 1000)
	}
	better := func(a, b hit) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return ix.docs[a.doc].item.Name < ix.docs[b.doc].item.Name
	}
	var out []hit
	total := 0
	for _, d := range touched {
		s := scores[d] * ix.docs[d].boost
		scores[d] = 0
		if !keep(&ix.docs[d]) {
			continue
		}
		total++
		h := hit{doc: int(d), score: s}
		if top <= 0 || len(out) < top {
			out = append(out, h)
			if top > 0 && len(out) == top {
				slices.SortFunc(out, func(a, b hit) int { return cmpHit(better, a, b) })
			}
			continue
		}
		// out is sorted and full: insert h if it beats the last.
		if better(h, out[len(out)-1]) {
			k, _ := slices.BinarySearchFunc(out, h, func(a, b hit) int { return cmpHit(better, a, b) })
			copy(out[k+1:], out[k:len(out)-1])
			out[k] = h
		}
	}
	acc.touched = touched[:0]
	if top <= 0 || len(out) < top {
		slices.SortFunc(out, func(a, b hit) int { return cmpHit(better, a, b) })
	}
	return out, total
}

func cmpHit(better func(a, b hit) bool, a, b hit) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// toolParts reads parameter names and descriptions, and tags, from a tool
// definition. Tags come from _meta "tags" or "skillgate.dev/tags".
func toolParts(raw json.RawMessage) (params, pdesc, tags []string) {
	var t struct {
		InputSchema struct {
			Properties map[string]struct {
				Description string `json:"description"`
				Title       string `json:"title"`
			} `json:"properties"`
		} `json:"inputSchema"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return nil, nil, nil
	}
	for name, p := range t.InputSchema.Properties {
		params = append(params, name)
		if p.Description != "" {
			pdesc = append(pdesc, p.Description)
		}
		if p.Title != "" {
			pdesc = append(pdesc, p.Title)
		}
	}
	slices.Sort(params)
	slices.Sort(pdesc)
	for _, k := range []string{"tags", "skillgate.dev/tags"} {
		var ts []string
		if json.Unmarshal(t.Meta[k], &ts) == nil {
			tags = append(tags, ts...)
		}
	}
	return params, pdesc, tags
}

// cardMax bounds a card's description, in bytes: about 25 tokens.
const cardMax = 100

// cardText is a tool's description cut to its first sentence or line and
// cardMax bytes.
func cardText(desc, title string) string {
	s := strings.TrimSpace(desc)
	if s == "" {
		s = strings.TrimSpace(title)
	}
	if i := strings.IndexAny(s, "\n\r"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > cardMax {
		cut := strings.LastIndexByte(s[:cardMax], ' ')
		if cut < cardMax/2 {
			cut = cardMax
			for cut > 0 && !utf8Start(s[cut]) {
				cut--
			}
		}
		s = strings.TrimRight(s[:cut], " ,;:") + "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// terms splits text into lower-case, stemmed search terms: words are split
// at non-alphanumerics and at camelCase humps, stop words are dropped.
func terms(text string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := strings.ToLower(string(word))
		word = word[:0]
		if stopWords[w] {
			return
		}
		out = append(out, stem(w))
	}
	rs := []rune(text)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// a hump: fooBar, or the last capital of HTTPServer
			if len(word) > 0 && unicode.IsUpper(r) {
				prev := word[len(word)-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
			}
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// stem strips common English inflections, so "files", "filing" and
// "filed" meet "file", and drops a final e so "create" meets "creating".
// It is deliberately light: a wrong merge costs more than a missed one.
func stem(w string) string {
	n := len(w)
	verb := false
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing") && strings.ContainsAny(w[:n-3], "aeiouy"):
		w, verb = w[:n-3], true
	case n > 4 && strings.HasSuffix(w, "ed") && w[n-3] != 'e' && strings.ContainsAny(w[:n-2], "aeiouy"):
		w, verb = w[:n-2], true
	case n > 3 && strings.HasSuffix(w, "es") && strings.ContainsRune("sxz", rune(w[n-3])):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:n-1]
	}
	m := len(w)
	if verb && m > 2 && w[m-1] == w[m-2] && !strings.ContainsRune("lsz", rune(w[m-1])) {
		return w[:m-1] // running -> run
	}
	if m > 3 && w[m-1] == 'e' {
		return w[:m-1]
	}
	return w
}

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "for": true,
	"and": true, "or": true, "with": true, "by": true, "from": true, "is": true, "it": true, "its": true,
	"this": true, "that": true, "as": true, "at": true, "be": true, "me": true, "my": true, "i": true,
	"you": true, "your": true, "we": true, "our": true, "into": true, "can": true, "will": true,
	"please": true, "some": true, "using": true, "use": true, "via": true, "are": true, "do": true,
	"does": true, "how": true, "what": true, "which": true, "should": true, "if": true, "then": true,
}
