package script

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/jsonscan"
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
	isObject := jsonscan.Members(line, func(key, v []byte, _, _ int) {
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
