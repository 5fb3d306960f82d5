package frontend

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestModernResult checks the members added to a 2026-07-28 result against
// the general merge (mergeResult), which decodes everything.
func TestModernResult(t *testing.T) {
	s := New(nil, Options{Name: "skillgate", Version: "test"})
	typed := insertMembers([]byte(`{}`), []member{{"resultType", []byte(`"complete"`)}, {"_meta", s.modernMeta}})
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"text","text":"a \"_meta\" in text"}]}`,
		`{"resultType":"complete","skills":[{"name":"x","_meta":{"k":1}}],"ttlMs":60000}`,
		`{"_meta":{"trace":"t1"},"content":[]}`,
		`{ "_meta" : { "io.modelcontextprotocol/serverInfo" : {"name":"up"} } , "isError" : true }`,
		`{"content":[],"_meta":{}}`,
		`{"structuredContent":{"_meta":[1,{"x":"}"}]},"content":[{"text":"\\\"}"}]}`,
	} {
		got := s.modernResult([]byte(raw))
		want := mergeResult([]byte(raw), typed)
		var g, w map[string]any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: modernResult gave invalid JSON %s: %v", raw, got, err)
		}
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", raw, got, want)
		}
	}
}

// TestWithMetaVersion: the header's version goes into the notification's
// _meta wherever that is missing it, and nothing else changes.
func TestWithMetaVersion(t *testing.T) {
	const v = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, `{"params":{"_meta":{` + v + `}},"jsonrpc":"2.0","method":"notifications/cancelled"}`},
		{`{"jsonrpc":"2.0","method":"n","params":null}`, `{"jsonrpc":"2.0","method":"n","params":{"_meta":{` + v + `}}}`},
		{`{"method":"n","params":{"requestId":3}}`, `{"method":"n","params":{"_meta":{` + v + `},"requestId":3}}`},
		{`{"method":"n","params":{"requestId":3,"_meta":null}}`, `{"method":"n","params":{"requestId":3,"_meta":{` + v + `}}}`},
		{`{"method":"n","params":{"_meta":{"x":1},"requestId":3}}`, `{"method":"n","params":{"_meta":{` + v + `,"x":1},"requestId":3}}`},
		// Left alone: already there, or not objects.
		{`{"method":"n","params":{"_meta":{` + v + `}}}`, `{"method":"n","params":{"_meta":{` + v + `}}}`},
		{`{"method":"n","params":[1]}`, `{"method":"n","params":[1]}`},
		{`{"method":"n","params":{"_meta":"x"}}`, `{"method":"n","params":{"_meta":"x"}}`},
	} {
		got := withMetaVersion([]byte(tc.in), "2026-07-28")
		if string(got) != tc.want {
			t.Errorf("withMetaVersion(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("withMetaVersion(%s) is not JSON: %s", tc.in, got)
		}
	}
}
