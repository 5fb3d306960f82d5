// Package jsonscan walks the top level of a JSON object without decoding
// it: the gateway routes and patches large results by their envelope
// (id, method, _meta, resultType) and passes everything else on as bytes.
//
//	jsonscan.Members(obj, func(key, value []byte, start, end int) {
//		if string(key) == "_meta" { ... obj[start:end] is the _meta value ... }
//	})
package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Members calls fn with each member of the JSON object b, in order: the
// key (unescaped), the value as it is, and the value's offsets in b. b must
// be valid JSON (json.Valid); Members reports whether it is an object.
func Members(b []byte, fn func(key, value []byte, start, end int)) bool {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) && b[i] == '"' {
		end := SkipString(b, i)
		key := b[i+1 : max(end-1, i+1)]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			var s string
			_ = json.Unmarshal(b[i:end], &s)
			key = []byte(s)
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = SkipSpace(b, i+1)
		vend := SkipValue(b, i)
		fn(key, b[i:vend], i, vend)
		i = SkipSpace(b, vend)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = SkipSpace(b, i+1)
	}
	return true
}

// SkipSpace returns the index of the first non-space byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index past the string starting at b[i] ('"').
func SkipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// SkipValue returns the index past the value starting at b[i].
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = SkipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// AppendString appends s to dst as a JSON string. Printable ASCII without
// quotes or backslashes, which names, keys and tokens nearly always are, is
// copied between quotes; anything else is escaped by encoding/json (HTML
// characters left as they are). Either way the result decodes back to s,
// with invalid UTF-8 replaced as encoding/json replaces it.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s) // a string always encodes
			return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// Kind names the kind of the JSON value b starts with, as an error
// message says it: "an object", "an array", "a string", "a boolean",
// "null" or "a number". It looks at the first byte of b (after space)
// only: b should hold a valid value. Empty b is "nothing".
func Kind(b []byte) string {
	i := SkipSpace(b, 0)
	if i >= len(b) {
		return "nothing"
	}
	switch b[i] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
