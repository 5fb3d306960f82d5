package shape

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func rows(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"query":"select * from orders","total":` + fmt.Sprint(n) + `,"rows":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"customer":"customer-%03d","amount":%d.50,"status":"shipped","note":"order placed through the web shop"}`, i+1, i%97, i*3)
	}
	b.WriteString(`],"page":{"next":null}}`)
	return []byte(b.String())
}

// TestJSONRows: a 500-row result fits the share of a 30,000-token window,
// stays valid JSON and keeps its envelope and total.
func TestJSONRows(t *testing.T) {
	src := rows(500)
	budget := Budget(30000, 0.1)
	out, notes := JSON(src, budget, "", "art_1")
	if len(out) > budget {
		t.Errorf("%d bytes > budget %d", len(out), budget)
	}
	var v struct {
		Query string            `json:"query"`
		Total int               `json:"total"`
		Rows  []json.RawMessage `json:"rows"`
		Page  map[string]any    `json:"page"`
		Trunc Note              `json:"_truncated"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	if v.Total != 500 || v.Query == "" || v.Page == nil || len(v.Rows) < 50 || v.Trunc.Total != 500 || v.Trunc.Kept != len(v.Rows) || v.Trunc.Path != "$.rows" || v.Trunc.Artifact != "art_1" {
		t.Errorf("envelope/note lost: total %d rows %d note %+v", v.Total, len(v.Rows), v.Trunc)
	}
	if len(notes) != 1 {
		t.Errorf("notes %v", notes)
	}
	golden(t, "rows500.json", out)
}

func TestJSONShapes(t *testing.T) {
	cases := map[string]string{
		"top-level array": `[` + strings.Repeat(`"item-item-item",`, 200) + `"last"]`,
		"nested":          `{"data":{"items":[` + strings.Repeat(`{"a":[1,2,3,4,5,6,7,8,9,10]},`, 100) + `{"a":[]}],"count":101}}`,
		"long string":     `{"log":"` + strings.Repeat("line of log output\\n", 500) + `","ok":false}`,
		"one huge item":   `{"rows":[{"blob":"` + strings.Repeat("x", 5000) + `"},{"blob":"y"}]}`,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			if !json.Valid([]byte(src)) {
				t.Fatal("bad fixture")
			}
			out, _ := JSON([]byte(src), 1000, "", "")
			if !json.Valid(out) {
				t.Fatalf("invalid JSON: %s", out)
			}
			if len(out) > 1000 {
				t.Errorf("%d bytes", len(out))
			}
		})
	}
	// Not JSON, or fitting: unchanged.
	for _, s := range []string{"not json", `{"a":1}`} {
		if out, notes := JSON([]byte(s), 4, "", ""); string(out) != s || notes != nil {
			t.Errorf("%q -> %q", s, out)
		}
	}
}

func TestText(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "line %d: ok\n", i)
	}
	b.WriteString("ERROR: disk full at step 1000\n")
	out := Text(b.String(), 600, "art_x")
	if len(out) > 600 || !strings.HasPrefix(out, "line 0: ok\n") || !strings.HasSuffix(out, "ERROR: disk full at step 1000\n") || !strings.Contains(out, "read_artifact art_x") {
		t.Errorf("%d bytes:\n%s", len(out), out)
	}
	if s := Text(strings.Repeat("é", 500), 100, ""); !json.Valid([]byte(fmt.Sprintf("%q", s))) || !strings.Contains(s, "left out") {
		t.Errorf("utf8: %q", s)
	}
}

func TestResult(t *testing.T) {
	sc := rows(500)
	res, _ := json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": string(sc)}},
		"structuredContent": json.RawMessage(sc),
	})
	st := NewStore(time.Minute, 0)
	sh := Shaper{Budget: 12000, Store: st}
	out := sh.Result(res)
	if len(out) > 12000 {
		t.Errorf("%d bytes", len(out))
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any            `json:"structuredContent"`
		Meta              map[string]map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(r.Content[0].Text)) || r.StructuredContent["total"] != 500.0 {
		t.Errorf("text %q...", r.Content[0].Text[:80])
	}
	// Page through the artifact: the pieces are the output itself (the
	// structuredContent), not the CallToolResult with the output twice
	// and escaped inside it.
	if got := readAll(t, st, r.Meta["skillgate/shaped"]["artifact"].(string)); got != string(sc) {
		t.Errorf("artifact is not the structured output: %.200s", got)
	}
	// Without structuredContent, the artifact is the text.
	long := strings.Repeat("a log line\n", 3000)
	res2, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": long}}})
	if err := json.Unmarshal(sh.Result(res2), &r); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, st, r.Meta["skillgate/shaped"]["artifact"].(string)); got != long {
		t.Errorf("artifact is not the text output: %.200s", got)
	}
	small := []byte(`{"content":[{"type":"text","text":"hi"}]}`)
	if got := sh.Result(small); !bytes.Equal(got, small) {
		t.Errorf("small result changed: %s", got)
	}
}

func readAll(t *testing.T, st *Store, h string) string {
	t.Helper()
	var all strings.Builder
	for off := 0; off >= 0; {
		c, err := st.Read(h, off, 5000)
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString(c.Data)
		off = c.Next
	}
	return all.String()
}

func TestStoreExpiry(t *testing.T) {
	st := NewStore(time.Minute, 100)
	now := time.Now()
	st.now = func() time.Time { return now }
	a := st.Put(bytes.Repeat([]byte("a"), 60))
	b := st.Put(bytes.Repeat([]byte("b"), 60)) // evicts a: over capacity
	if _, err := st.Read(a, 0, 10); err == nil {
		t.Error("a survived eviction")
	}
	if c, err := st.Read(b, 50, 100); err != nil || c.Data != "bbbbbbbbbb" || c.Next != -1 {
		t.Errorf("%+v %v", c, err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := st.Read(b, 0, 10); err == nil {
		t.Error("b outlived its TTL")
	}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,3],"b":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`), 20)
	f.Add([]byte(`[[1,2],[3,4],{"k":[5,6,7]}]`), 8)
	f.Add(rows(3), 100)
	f.Fuzz(func(t *testing.T, src []byte, budget int) {
		if budget < 0 || budget > 1<<20 {
			return
		}
		out, _ := JSON(src, budget, "", "")
		if json.Valid(src) && !json.Valid(out) {
			t.Fatalf("valid %s became invalid %s", src, out)
		}
	})
}
