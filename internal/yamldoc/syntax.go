package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// maxLocate bounds the input Syntax searches again for the place of a
// problem, some 25 parses of it at worst (yaml.v3 reads a few MB/s); a
// larger file keeps the line yaml.v3 printed.
const maxLocate = 64 << 10

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// parserProblems are the messages of yaml.v3's parser, as opposed to its
// scanner. For these it prints the 0-based line of the construct it was in
// (the mapping, not the key it could not take) where scanner errors get a
// 1-based one.
var parserProblems = []string{
	"did not find expected <stream-start>", "did not find expected <document start>",
	"found undefined tag handle", "did not find expected node content",
	"did not find expected '-' indicator", "did not find expected key",
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"found duplicate %YAML directive", "found incompatible YAML document", "found duplicate %TAG directive",
}

// firstYAMLError returns the first error yaml.v3 finds in data's documents.
func firstYAMLError(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// Syntax returns err, the error yaml.v3 gave for data, as a problem at the
// place of the problem, with what to do about it when that is known. Msg
// is yaml.v3's message without its "yaml: line N:" prefix.
//
// yaml.v3 prints no column and, for most parser errors, the wrong line: the
// 0-based line of the construct it was in ("while parsing a block
// mapping"), not the token it could not take. So the place is found again:
// it is the end of the shortest prefix of data that fails with the very
// same error, found by binary search over the lines and then over the
// characters of the line. An unclosed [, { or quote is reported where it
// opens, found by closing it and parsing again.
func Syntax(err error, data []byte) Problem {
	full := err.Error()
	msg := strings.TrimPrefix(full, "yaml: ")
	line := 0
	if m := yamlLine().FindStringSubmatch(full); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	p := Problem{Line: line, Msg: msg}
	if line > 0 && slices.Contains(parserProblems, msg) {
		p.Line++ // the construct's line, at least
	}
	if len(data) > maxLocate || !utf8.Valid(data) || firstYAMLError(data) == nil {
		return p
	}
	fails := func(end int) bool {
		err := firstYAMLError(data[:end])
		return err != nil && err.Error() == full
	}
	// Line numbers are only ever too small, so the search starts at line.
	ends := lineEnds(data)
	first := max(line, 1) - 1
	if first >= len(ends) {
		first = len(ends) - 1
	}
	l := first + sort.Search(len(ends)-first, func(i int) bool { return fails(ends[first+i]) })
	if l == len(ends) {
		return p
	}
	start := 0
	if l > 0 {
		start = ends[l-1]
	}
	var cuts []int // the ends of the line's characters
	for i := start; i < ends[l]; {
		_, size := utf8.DecodeRune(data[i:])
		i += size
		cuts = append(cuts, i)
	}
	c := sort.Search(len(cuts), func(i int) bool { return fails(cuts[i]) })
	if c == len(cuts) {
		return p
	}
	cut := cuts[c]
	_, size := utf8.DecodeLastRune(data[:cut])
	at := cut - size // the character that made the prefix fail
	p.Line, p.Col = lineCol(data, at)
	p.Msg = hint(msg, data, at, cut, &p)
	return p
}

// lineEnds returns the offset just past each line of data.
func lineEnds(data []byte) []int {
	var ends []int
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] < len(data) {
		ends = append(ends, len(data))
	}
	return ends
}

var unknownAnchor = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^unknown anchor '(.*)' referenced$`) })

// hint adds to msg, yaml.v3's problem with the character of data at at
// (data[:cut] is the shortest prefix that fails), what to do about it, and
// moves p to where the fix goes when that is elsewhere.
func hint(msg string, data []byte, at, cut int, p *Problem) string {
	switch msg {
	case "did not find expected key", "did not find expected '-' indicator":
		// The line's first character is the key or item out of place.
		start := bytes.LastIndexByte(data[:at], '\n') + 1
		p.Col = len(data[start:at]) - len(bytes.TrimLeft(data[start:at], " ")) + 1
		if msg == "did not find expected key" {
			return msg + "; this line does not line up with the keys above it: indent it like them, or further if it belongs to the value above"
		}
		return msg + "; this line does not line up with the items of the list above it: start it with - in the same column as they do"
	case "did not find expected ',' or ']'", "did not find expected ',' or '}'":
		open, closer, what := "[", "]", "list"
		if strings.HasSuffix(msg, "'}'") {
			open, closer, what = "{", "}", "mapping"
		}
		if line, col, ok := opening(data[:at], func(n *yaml.Node) bool {
			return n.Style&yaml.FlowStyle != 0 && (n.Kind == yaml.SequenceNode) == (open == "[")
		}); ok {
			p.Line, p.Col = line, col
		}
		return fmt.Sprintf("%s; this %s is not closed: end the %s with %s, and separate its items with commas", msg, open, what, closer)
	case "found unexpected end of stream":
		if line, col, ok := opening(data[:cut], func(n *yaml.Node) bool {
			return n.Kind == yaml.ScalarNode && n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0
		}); ok {
			p.Line, p.Col = line, col
			return msg + "; this quoted value is not closed: end it with the quote it starts with"
		}
	case "did not find expected node content":
		if data[at] == '[' || data[at] == '{' {
			return fmt.Sprintf("%s; this %c is not closed: close it, or give the value", msg, data[at])
		}
		return msg + "; a value is missing here"
	case "could not find expected ':'":
		return msg + "; a key needs a : after it: add it, or indent this line further if it continues the value above"
	case "mapping values are not allowed in this context":
		return msg + "; quote the value if it contains ': ', or check the indentation"
	case "found character that cannot start any token":
		if data[at] == '\t' {
			return msg + "; this is a tab: indent with spaces"
		}
		r, _ := utf8.DecodeRune(data[at:])
		return fmt.Sprintf("%s; a value cannot start with %q: quote the value", msg, r)
	case "found unknown escape character":
		return msg + "; in double quotes write \\\\ for a backslash, or quote the value with ' instead"
	case "control characters are not allowed":
		return msg + "; remove it, or write it as an escape such as \\t in double quotes"
	case "found a tab character that violates indentation", "found a tab character where an indentation space is expected":
		return msg + "; indent with spaces, not tabs"
	}
	if m := unknownAnchor().FindStringSubmatch(msg); m != nil && cut-len(m[1])-1 >= 0 {
		p.Line, p.Col = lineCol(data, cut-len(m[1])-1)
		return fmt.Sprintf("%s; define &%s before this point, or fix the name", msg, m[1])
	}
	return msg
}

// opening returns where the innermost [, { or quote left open at the end of
// data starts, one that want accepts: it appends the closers yaml.v3 asks
// for until data parses, then looks along the last node of each level.
func opening(data []byte, want func(*yaml.Node) bool) (line, col int, ok bool) {
	buf := slices.Clip(data)
	for range 32 {
		var last *yaml.Node
		dec := yaml.NewDecoder(bytes.NewReader(buf))
		var err error
		for {
			var doc yaml.Node
			if err = dec.Decode(&doc); err != nil {
				break
			}
			last = &doc
		}
		if errors.Is(err, io.EOF) {
			var found *yaml.Node
			for n := last; n != nil; {
				if want(n) {
					found = n
				}
				if len(n.Content) == 0 {
					break
				}
				n = n.Content[len(n.Content)-1]
			}
			if found == nil {
				return 0, 0, false
			}
			return found.Line, found.Column, true
		}
		switch msg := err.Error(); {
		case strings.HasSuffix(msg, "did not find expected ',' or ']'"):
			buf = append(buf, ']')
		case strings.HasSuffix(msg, "did not find expected ',' or '}'"):
			buf = append(buf, '}')
		case strings.HasSuffix(msg, "did not find expected node content"):
			buf = append(buf, " ~"...) // a null where a value was cut off
		case strings.HasSuffix(msg, "found unexpected end of stream"):
			// Close with the quote that ends the scalar.
			q := byte('"')
			if e := firstYAMLError(append(slices.Clip(buf), q)); e != nil && strings.HasSuffix(e.Error(), "found unexpected end of stream") {
				q = '\''
			}
			buf = append(buf, q)
		default:
			return 0, 0, false
		}
	}
	return 0, 0, false
}
