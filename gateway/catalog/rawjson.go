package catalog

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/jsonscan"
)

// A definition's bytes are kept as they are, with only the "name" value
// spliced: jsonscan walks them (json.Valid has accepted them first).

// jsonString decodes a JSON string value; ok is false for any other value.
func jsonString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// span is a byte range [start, end) in a definition.
type span struct{ start, end int }

// fields is what Build reads from a definition.
type fields struct {
	name, uri, uriTemplate   string
	hasName, hasURI, hasTmpl bool
	hasSchema                bool // an inputSchema that is not null
	title, description, ann  string
	skill                    string // _meta["skillgate/skill"]
	nameSpans                []span // every top-level "name" value
}

// parseFields reads the members Build needs. Keys match exactly (MCP is
// case-sensitive, unlike encoding/json's struct decoding); for a repeated
// key the last one counts, as in encoding/json.
func parseFields(raw []byte) (fields, bool) {
	var f fields
	if !json.Valid(raw) {
		return f, false
	}
	ok := jsonscan.Members(raw, func(key, v []byte, start, end int) {
		switch string(key) {
		case "name":
			f.nameSpans = append(f.nameSpans, span{start, end})
			f.name, f.hasName = jsonString(v)
		case "inputSchema":
			f.hasSchema = string(v) != "null"
		case "uri":
			f.uri, f.hasURI = jsonString(v)
		case "uriTemplate":
			f.uriTemplate, f.hasTmpl = jsonString(v)
		case "title":
			f.title, _ = jsonString(v)
		case "description":
			f.description, _ = jsonString(v)
		case "annotations":
			jsonscan.Members(v, func(key, av []byte, _, _ int) {
				if string(key) == "title" {
					f.ann, _ = jsonString(av)
				}
			})
		case "_meta":
			jsonscan.Members(v, func(key, mv []byte, _, _ int) {
				if string(key) == MetaSkill {
					f.skill, _ = jsonString(mv)
				}
			})
		}
	})
	return f, ok
}

// emptySchema is the inputSchema a tool without one is served with: MCP
// requires one, and clients drop a tool that lacks it.
const emptySchema = `{"type":"object"}`

// withEmptySchema returns raw, an object with at least one member, with
// an "inputSchema" member of emptySchema put first.
func withEmptySchema(raw []byte) []byte {
	i := bytes.IndexByte(raw, '{') + 1
	member := `"inputSchema":` + emptySchema + `,`
	out := make([]byte, 0, len(raw)+len(member))
	out = append(out, raw[:i]...)
	out = append(out, member...)
	return append(out, raw[i:]...)
}

// spliceName returns a copy of raw with every span replaced by the JSON
// string name; name is a valid exposed name, so it needs no escaping.
func spliceName(raw []byte, spans []span, name string) []byte {
	out := make([]byte, 0, len(raw)+len(spans)*(len(name)+2))
	prev := 0
	for _, sp := range spans {
		out = append(out, raw[prev:sp.start]...)
		out = append(out, '"')
		out = append(out, name...)
		out = append(out, '"')
		prev = sp.end
	}
	return append(out, raw[prev:]...)
}
