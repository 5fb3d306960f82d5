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

func FuzzTopMembers(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1,"b":[1,{"c":"}"}],"d":"\\\""}`, `{"_meta":{"x":null}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return
		}
		spans, ok := topMembers(b)
		if !ok {
			t.Fatalf("valid object not walked: %s", b)
		}
		for _, sp := range spans {
			var k string
			if err := json.Unmarshal(b[sp.keyStart:sp.keyEnd], &k); err != nil {
				t.Fatalf("key span %q: %v", b[sp.keyStart:sp.keyEnd], err)
			}
			if !json.Valid(b[sp.valStart:sp.valEnd]) {
				t.Fatalf("value span %q of %q is not JSON", b[sp.valStart:sp.valEnd], k)
			}
		}
	})
}
