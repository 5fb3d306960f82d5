package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkEnvelope compares parseEnvelope with the encoding/json decode it
// stands in for, outside what it does not copy on purpose (case-folded
// keys, UTF-8 repair).
func checkEnvelope(t *testing.T, line []byte) {
	got, gotOK := parseEnvelope(line)
	var want envelope
	wantOK := len(line) > 0 && line[0] == '{' && json.Unmarshal(line, &want) == nil
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) == nil {
		for k := range m {
			for _, n := range []string{"id", "method", "params", "result", "error"} {
				if k != n && strings.EqualFold(k, n) {
					return
				}
			}
		}
	}
	if !utf8.Valid(line) || bytes.Contains(line, []byte(`\u`)) {
		return
	}
	if gotOK != wantOK {
		t.Fatalf("parseEnvelope(%q) ok = %v, encoding/json says %v", line, gotOK, wantOK)
	}
	if gotOK && !reflect.DeepEqual(got, want) {
		t.Fatalf("parseEnvelope(%q) =\n%+v\nencoding/json:\n%+v", line, got, want)
	}
}

func TestParseEnvelope(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
		`{"jsonrpc":"2.0","id":9,"method":"roots/list"}`,
		`{"id":null,"method":null}`,
		`{"method":1}`, `{"id":1,"method":"a\"b"}`, `[]`, `{`, `{"id":1}{}`,
		`{"id":1,"id":2,"result":1,"result":{}}`,
	} {
		checkEnvelope(t, []byte(line))
	}
	// The parts must not alias the line: the reader reuses its buffer.
	line := []byte(`{"id":1,"result":{"a":1}}`)
	m, _ := parseEnvelope(line)
	copy(line, bytes.Repeat([]byte("x"), len(line)))
	if string(m.Result) != `{"a":1}` || string(m.ID) != "1" {
		t.Fatalf("parts changed with the line: %s %s", m.ID, m.Result)
	}
}

func FuzzParseEnvelope(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m","data":null}}`))
	f.Fuzz(func(t *testing.T, line []byte) { checkEnvelope(t, line) })
}
