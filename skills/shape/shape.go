// Package shape fits tool output to a client's context: JSON is reduced
// structurally (the largest collection shrinks, the envelope and its
// totals stay, a "_truncated" note says what was cut and how to narrow the
// call) and always stays valid JSON; text keeps its head and its tail,
// where errors cluster. The full output can be kept in a Store as an
// artifact the client pages through.
//
//	budget := shape.Budget(200_000, 0.1) // tokens of the window, share of one result
//	sh := shape.Shaper{Budget: budget, Store: shape.NewStore(0, 0)}
//	result = sh.Result(result) // an MCP CallToolResult
package shape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// BytesPerToken is the rough size of a token in JSON and English text.
const BytesPerToken = 4

// DefaultShare is the share of the context window one result may use.
const DefaultShare = 0.1

// Budget is the byte budget of one result: windowTokens × share tokens of
// about BytesPerToken bytes. A share <= 0 means DefaultShare.
func Budget(windowTokens int, share float64) int {
	if share <= 0 || share > 1 {
		share = DefaultShare
	}
	return int(float64(windowTokens) * share * BytesPerToken)
}

// Note describes what JSON lost to fit.
type Note struct {
	// Path is where the shrunk collection is ("$.rows", "$.data.items").
	Path string `json:"path"`
	// Kept and Total count its items.
	Kept  int `json:"kept"`
	Total int `json:"total"`
	// Hint tells the model how to get the rest.
	Hint string `json:"hint"`
	// Artifact is the handle of the full output, when it was stored.
	Artifact string `json:"artifact,omitempty"`
}

// node is a JSON value that keeps the order of object keys.
type node struct {
	kind byte // '{', '[', or 0 for a scalar (raw)
	keys []string
	vals []*node
	raw  []byte
	size int // encoded size, kept current by measure
}

func parse(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(t)}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := parse(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	default:
		raw, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		return &node{raw: raw}, nil
	}
}

func (n *node) measure() int {
	switch n.kind {
	case 0:
		n.size = len(n.raw)
	default:
		s := 2
		for i, v := range n.vals {
			if i > 0 {
				s++
			}
			if n.kind == '{' {
				s += len(quote(n.keys[i])) + 1
			}
			s += v.measure()
		}
		n.size = s
	}
	return n.size
}

func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func (n *node) encode(buf *bytes.Buffer) {
	if n.kind == 0 {
		buf.Write(n.raw)
		return
	}
	buf.WriteByte(n.kind)
	for i, v := range n.vals {
		if i > 0 {
			buf.WriteByte(',')
		}
		if n.kind == '{' {
			buf.Write(quote(n.keys[i]))
			buf.WriteByte(':')
		}
		v.encode(buf)
	}
	if n.kind == '{' {
		buf.WriteByte('}')
	} else {
		buf.WriteByte(']')
	}
}

// largest finds the biggest array (by encoded size) with more than one
// item, with its parent object (nil when the array is not an object's
// value) and its path.
func (n *node) largest(path string, parent *node) (arr, owner *node, at string) {
	best := 0
	var walk func(x, obj *node, p string)
	walk = func(x, obj *node, p string) {
		if x.kind == '[' && len(x.vals) > 1 && x.size > best {
			arr, owner, at, best = x, obj, p, x.size
		}
		for i, v := range x.vals {
			switch x.kind {
			case '{':
				walk(v, x, p+"."+x.keys[i])
			case '[':
				walk(v, obj, p+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(n, parent, path)
	return
}

// longestString finds the longest string scalar.
func (n *node) longestString() *node {
	var best *node
	var walk func(x *node)
	walk = func(x *node) {
		if x.kind == 0 && len(x.raw) > 0 && x.raw[0] == '"' && (best == nil || len(x.raw) > len(best.raw)) {
			best = x
		}
		for _, v := range x.vals {
			walk(v)
		}
	}
	walk(n)
	return best
}

// JSON reduces the JSON value src to at most budget bytes when it can:
// the largest array keeps as many leading items as fit (at least one),
// again for the next largest while needed, then the longest strings keep
// their head and tail. An object that lost items gets a "_truncated" key
// with a Note (the top-level object, or the one holding the array). It
// returns src unchanged when it fits or is not JSON, and the notes of what
// was cut. The result is always valid JSON.
func JSON(src []byte, budget int, hint, artifact string) ([]byte, []Note) {
	if len(src) <= budget {
		return src, nil
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	root, err := parse(dec)
	if err != nil || dec.More() {
		return src, nil
	}
	if hint == "" {
		hint = "narrow the call (a filter, a smaller limit, a page) to get the rest"
	}
	var notes []Note
	noted := map[*node]*node{} // owner object -> its note node
	for range 64 {
		total := root.measure()
		if total <= budget {
			break
		}
		arr, owner, at := root.largest("$", nil)
		if arr == nil {
			if s := root.longestString(); s != nil && len(s.raw) > 64 {
				var str string
				_ = json.Unmarshal(s.raw, &str)
				keep := max(len(str)-(total-budget)-64, 32)
				if keep >= len(str) {
					break
				}
				s.raw, _ = json.Marshal(Text(str, keep, ""))
				continue
			}
			break
		}
		// Keep the leading items that fit in what the rest leaves.
		room := budget - (total - arr.size) - 200 // the note's size
		kept, used := 0, 2
		for _, v := range arr.vals {
			if used+v.size+1 > room && kept >= 1 {
				break
			}
			used += v.size + 1
			kept++
		}
		if kept >= len(arr.vals) {
			kept = len(arr.vals) - 1
		}
		n := Note{Path: at, Kept: kept, Total: len(arr.vals), Hint: hint, Artifact: artifact}
		for i := range notes {
			if notes[i].Path == at {
				n.Total = notes[i].Total
				notes = append(notes[:i], notes[i+1:]...)
				break
			}
		}
		arr.vals = arr.vals[:kept]
		notes = append(notes, n)
		if owner == nil && root.kind == '{' {
			owner = root
		}
		if owner != nil {
			raw, _ := json.Marshal(n)
			if nn := noted[owner]; nn != nil {
				nn.raw = raw
			} else {
				nn = &node{raw: raw}
				noted[owner] = nn
				owner.keys = append(owner.keys, "_truncated")
				owner.vals = append(owner.vals, nn)
			}
		}
	}
	var buf bytes.Buffer
	root.encode(&buf)
	return buf.Bytes(), notes
}

// Text keeps at most budget bytes of s: a third from the head and the
// rest from the tail (errors and summaries come last), cut at line ends
// where it can and never inside a UTF-8 sequence, with a marker saying
// how much was left out.
func Text(s string, budget int, artifact string) string {
	if len(s) <= budget {
		return s
	}
	marker := func(n int) string {
		m := fmt.Sprintf("\n[... %d bytes left out", n)
		if artifact != "" {
			m += "; read_artifact " + artifact + " pages through all of it"
		}
		return m + " ...]\n"
	}
	room := budget - len(marker(len(s)))
	if room < 16 {
		room = 16
	}
	headN := room / 3
	tailN := room - headN
	head := s[:headN]
	if i := strings.LastIndexByte(head, '\n'); i > headN/2 {
		head = head[:i+1]
	}
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	tail := s[len(s)-tailN:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < tailN/2 {
		tail = tail[i+1:]
	}
	for len(tail) > 0 && !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return head + marker(len(s)-len(head)-len(tail)) + tail
}
