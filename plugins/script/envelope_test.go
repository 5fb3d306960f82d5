package script

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var messageSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`,
	`{"jsonrpc": "2.0", "id": "s1", "method": "state/get", "params": {"key": "k"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"boom","data":[1]}}`,
	`{"ID":1,"Result":{},"METHOD":null}`,
	`{"id":1,"id":2,"method":"a","method":null}`,
	`{"error":{"code":1},"error":{"message":"x"}}`,
	`{"error":{"code":1},"error":null}`,
	`{"method":5}`,
	`{"jsonrpc":2}`,
	`{"error":"x"}`,
	`{"error":{"code":"x"}}`,
	`{"m\u0065thod":"a\/b","id":null}`,
	"{\"method\":\"\xff\"}",
	"{\"id\":1,\"\xffid\":2}",
	` { "id" : [ 1 , { "a" : "}" } ] , "result" : "\"}" } `,
	`{}`,
	`[1]`,
	`null`,
	`{"id":1e3,"result":true,"params":-0.5}`,
}

// FuzzDecodeMessage checks decodeMessage against json.Unmarshal into a
// message, which it replaces on the hot path.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range messageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' {
			return
		}
		var want message
		wantOK := json.Unmarshal(line, &want) == nil
		got, ok := decodeMessage(line)
		if ok != wantOK {
			t.Fatalf("%q: ok %v, json.Unmarshal ok %v", line, ok, wantOK)
		}
		if !ok {
			return
		}
		if !bytes.Equal(got.ID, want.ID) || got.Method != want.Method || got.JSONRPC != want.JSONRPC ||
			!bytes.Equal(got.Params, want.Params) || !bytes.Equal(got.Result, want.Result) ||
			!reflect.DeepEqual(got.Error, want.Error) {
			t.Fatalf("%q:\n got %+v %+v\nwant %+v %+v", line, got, got.Error, want, want.Error)
		}
	})
}

// withStatusMaps is what withStatus did before it spliced: decode, add,
// encode.
func withStatusMaps(raw json.RawMessage, status string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return errorResult(statusError, "the tool answered with a result that is not a JSON object: "+clip(string(raw), 200))
	}
	if _, ok := m["content"]; !ok {
		m["content"] = json.RawMessage("[]")
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(m["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[StatusKey], _ = json.Marshal(status)
	m["_meta"], _ = json.Marshal(meta)
	out, _ := json.Marshal(m)
	return out
}

func TestWithStatus(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"content":[{"type":"text","text":"ok"}]}`, `{"content":[{"type":"text","text":"ok"}],"_meta":{"skillgate/status":"ok"}}`},
		{`{}`, `{"content":[],"_meta":{"skillgate/status":"ok"}}`},
		{` { } `, `{"content":[],"_meta":{"skillgate/status":"ok"}}`},
		{`{"structuredContent": {"a": 1}}`, `{"structuredContent":{"a":1},"content":[],"_meta":{"skillgate/status":"ok"}}`},
		{`{"content":[],"_meta":{"x":1}}`, `{"_meta":{"skillgate/status":"ok","x":1},"content":[]}`},
		{`{"content":[],"_meta":null}`, `{"_meta":{"skillgate/status":"ok"},"content":[]}`},
		{`{"content":[],"_meta":"x"}`, `{"_meta":{"skillgate/status":"ok"},"content":[]}`},
		{`{"Content":[]}`, `{"Content":[],"content":[],"_meta":{"skillgate/status":"ok"}}`},
	} {
		if got := withStatus(json.RawMessage(c.in), "ok"); string(got) != c.want {
			t.Errorf("withStatus(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	for _, in := range []string{`null`, `[1]`, `"x"`, `1`} {
		if got := withStatus(json.RawMessage(in), "ok"); !strings.Contains(string(got), "not a JSON object") {
			t.Errorf("withStatus(%s) = %s", in, got)
		}
	}
}

// FuzzWithStatus checks that splicing the status in means the same JSON as
// decoding and encoding the result did.
func FuzzWithStatus(f *testing.F) {
	for _, s := range []string{`{"content":[]}`, `{}`, `{"a":"<&>\u2028","content":1,"content":2}`,
		`{"_meta":{"a":1},"_meta":null}`, `{"x":{"_meta":1}}`, `{"\u005fmeta":{}}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		got, want := withStatus(raw, "ok"), withStatusMaps(raw, "ok")
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%q: invalid JSON %q: %v", raw, got, err)
		}
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%q:\n got %s\nwant %s", raw, got, want)
		}
		if bytes.ContainsAny(got, "\n\r") {
			t.Fatalf("%q: %q spans lines", raw, got)
		}
	})
}
