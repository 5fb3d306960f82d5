package script

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// The script's messages are routed on their envelope (id, method, error)
// without decoding the rest: a result is passed on as it is, with the
// status spliced in. decodeMessage gives what json.Unmarshal into a message
// gives, FuzzDecodeMessage checks that.

// decodeMessage decodes one line of the script's stdout, a JSON object.
// Like json.Unmarshal into a message, keys match case-insensitively, the
// last of duplicate keys wins, and a value of the wrong type (a method that
// is not a string, say) fails the whole message. The raw fields alias line.
func decodeMessage(line []byte) (message, bool) {
	var m message
	if !json.Valid(line) {
		return m, false
	}
	ok := true
	isObject := members(line, func(key, v []byte) {
		switch {
		case bytes.EqualFold(key, []byte("id")):
			m.ID = v
		case bytes.EqualFold(key, []byte("method")):
			ok = decodeString(v, &m.Method) && ok
		case bytes.EqualFold(key, []byte("jsonrpc")):
			ok = decodeString(v, &m.JSONRPC) && ok
		case bytes.EqualFold(key, []byte("params")):
			m.Params = v
		case bytes.EqualFold(key, []byte("result")):
			m.Result = v
		case bytes.EqualFold(key, []byte("error")):
			if string(v) == "null" {
				m.Error = nil
				return
			}
			if m.Error == nil {
				m.Error = new(sdk.RPCError)
			}
			ok = json.Unmarshal(v, m.Error) == nil && ok
		}
	})
	return m, ok && isObject
}

// decodeString decodes a JSON string into s; null leaves s as it is.
func decodeString(v []byte, s *string) bool {
	switch {
	case string(v) == "null":
		return true
	case len(v) < 2 || v[0] != '"':
		return false
	case bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v):
		*s = string(v[1 : len(v)-1])
		return true
	}
	return json.Unmarshal(v, s) == nil
}

// members calls fn with the key (unescaped) and the value (as it is) of
// each member of the JSON object b, in order. b must be valid JSON
// (json.Valid); members reports whether it is an object.
func members(b []byte, fn func(key, value []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) && b[i] == '"' {
		end := skipString(b, i)
		key := b[i+1 : max(end-1, i+1)]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			var s string
			_ = json.Unmarshal(b[i:end], &s)
			key = []byte(s)
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		fn(key, b[i:vend])
		i = skipSpace(b, vend)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = skipSpace(b, i+1)
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index past the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
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

// skipValue returns the index past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
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
