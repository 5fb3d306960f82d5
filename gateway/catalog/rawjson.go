package catalog

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The functions here walk JSON that json.Valid has accepted, so they do not
// check syntax again. They exist so that a definition's bytes can be kept as
// they are, with only the "name" value spliced.

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); {
		switch b[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return i
}

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// eachMember calls fn with the key and the value span [start, end) of every
// top-level member of the object in b, in order. b must be valid JSON; the
// result is false when it is not an object.
func eachMember(b []byte, fn func(key []byte, start, end int)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if b[i] == '}' {
		return true
	}
	for {
		ke := skipString(b, i)
		key := b[i+1 : ke-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			_ = json.Unmarshal(b[i:ke], &s)
			key = []byte(s)
		}
		i = skipWS(b, skipWS(b, ke)+1) // past ':'
		ve := skipValue(b, i)
		fn(key, i, ve)
		i = skipWS(b, ve)
		if b[i] != ',' {
			return true
		}
		i = skipWS(b, i+1)
	}
}

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
	title, description, ann  string
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
	ok := eachMember(raw, func(key []byte, start, end int) {
		v := raw[start:end]
		switch string(key) {
		case "name":
			f.nameSpans = append(f.nameSpans, span{start, end})
			f.name, f.hasName = jsonString(v)
		case "uri":
			f.uri, f.hasURI = jsonString(v)
		case "uriTemplate":
			f.uriTemplate, f.hasTmpl = jsonString(v)
		case "title":
			f.title, _ = jsonString(v)
		case "description":
			f.description, _ = jsonString(v)
		case "annotations":
			eachMember(v, func(key []byte, s, e int) {
				if string(key) == "title" {
					f.ann, _ = jsonString(v[s:e])
				}
			})
		}
	})
	return f, ok
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
