package frontend

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeRequest is what parseRequest stands in for.
func decodeRequest(body []byte) (request, bool) {
	var req request
	return req, json.Unmarshal(body, &req) == nil
}

// caseTwin reports whether obj has a key that encoding/json would match to
// one of names only because it ignores case (parseRequest does not).
func caseTwin(obj []byte, names ...string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	for k := range m {
		for _, n := range names {
			if k != n && strings.EqualFold(k, n) {
				return true
			}
		}
	}
	return false
}

func checkParse(t *testing.T, body []byte) {
	want, wantOK := decodeRequest(body)
	got, gotOK := parseRequest(body)
	if caseTwin(body, "id", "method", "params") || !utf8.Valid(body) || bytes.Contains(body, []byte(`\u`)) {
		return // encoding/json's case folding and UTF-8 repair are not copied
	}
	var top struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &top) == nil && caseTwin(top.Params, "cursor", "name", "arguments", "_meta", "task") {
		return
	}
	if gotOK != wantOK {
		t.Fatalf("parseRequest(%q) ok = %v, encoding/json says %v", body, gotOK, wantOK)
	}
	if !gotOK {
		return
	}
	norm := func(r request) request {
		for _, p := range []*json.RawMessage{&r.ID, &r.Params.Arguments, &r.Params.Meta, &r.Params.Task} {
			if len(*p) == 0 {
				*p = nil
			}
		}
		return r
	}
	if !reflect.DeepEqual(norm(got), norm(want)) {
		t.Fatalf("parseRequest(%q) =\n%+v\nencoding/json:\n%+v", body, got, want)
	}
}

func TestParseRequestMatchesEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a__b","arguments":{"x":[1,2]},"_meta":{"progressToken":"t"}}}`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/list","params":{"cursor":"c2"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a\"b\\u00e9"}`,
		`{"id":1,"method":5}`,
		`{"id":1,"method":"x","params":[1]}`,
		`{"id":1,"method":"x","params":{"name":3}}`,
		`{"id":1,"method":"x","params":{"cursor":{}}}`,
		`{"id":1,"method":null}`,
		`{"id":1,"method":"a","method":"b","params":{"name":"x"},"params":{"arguments":1}}`,
		`[1]`, `"x"`, `{`, ``, ` {"id" : 1 , "method" : "m" } `,
	} {
		checkParse(t, []byte(body))
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a__b","arguments":{"x":1},"_meta":{"progressToken":"t"},"task":{}}}`))
	f.Add([]byte(`{"id":"s","method":"tools/list","params":{"cursor":"c"}}`))
	f.Add([]byte(`{"id":1,"result":{"a":[true,null]}}`))
	f.Fuzz(func(t *testing.T, body []byte) { checkParse(t, body) })
}
