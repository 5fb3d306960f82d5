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
