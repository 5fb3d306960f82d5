package frontend

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// decodeRequest is what parseRequest stands in for.
func decodeRequest(body []byte) (request, bool) {
	var req request
	return req, json.Unmarshal(body, &req) == nil
}

func checkParse(t *testing.T, body []byte) {
	want, wantOK := decodeRequest(body)
	got, gotOK := parseRequest(body)
	if !utf8.Valid(body) || bytes.Contains(body, []byte(`\u`)) {
		return // encoding/json's UTF-8 repair is not copied
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
		// Keys in other letter case, which encoding/json (and so mcp-go)
		// takes too, the last one given winning.
		`{"jsonrpc":"2.0","JSONRPC":"1.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"ID":true,"method":"tools/call","Method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","NAME":"b","_META":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","nameſ":"b","naſme":1}}`,
		`{"jſonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"Id":1,"method":5}`,
		// The version as mcp-go reads it.
		`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"1.0","id":1}`, `{"jsonrpc":null,"id":1}`, `{"jsonrpc":2,"id":1}`,
	} {
		checkParse(t, []byte(body))
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a__b","arguments":{"x":1},"_meta":{"progressToken":"t"},"task":{}}}`))
	f.Add([]byte(`{"id":"s","method":"tools/list","params":{"cursor":"c"}}`))
	f.Add([]byte(`{"id":1,"result":{"a":[true,null]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","Id":"x","METHOD":"tools/list","params":{"Cursor":"c","NAME":"n"}}`))
	f.Fuzz(func(t *testing.T, body []byte) { checkParse(t, body) })
}
