package disclosure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
)

// TestRanking measures find_tools on a fixed catalog: the real tool
// definitions of the reference servers (everything, filesystem, memory, as
// their tools/list returned them) plus realistic definitions of 46 other
// servers, and queries written with their expected answers. A query is a
// hit when one of its expected tools is in the top 3.
func TestRanking(t *testing.T) {
	var entries []struct {
		Server string          `json:"server"`
		Tool   json.RawMessage `json:"tool"`
	}
	var queries []struct {
		Query  string   `json:"query"`
		Expect []string `json:"expect"`
		Server string   `json:"server"`
	}
	for file, v := range map[string]any{"catalog.json": &entries, "queries.json": &queries} {
		b, err := os.ReadFile(filepath.Join("testdata", "ranking", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	bySrc := map[string]*catalog.Source{}
	var order []string
	for _, e := range entries {
		src := bySrc[e.Server]
		if src == nil {
			src = &catalog.Source{ID: e.Server, Namespace: e.Server, Order: len(order)}
			bySrc[e.Server] = src
			order = append(order, e.Server)
		}
		src.Defs.Tools = append(src.Defs.Tools, e.Tool)
	}
	var srcs []catalog.Source
	for _, n := range order {
		srcs = append(srcs, *bySrc[n])
	}
	snap := catalog.Build(srcs, catalog.Options{Reserved: Names})
	if len(snap.Tools()) < 300 || len(queries) < 30 {
		t.Fatalf("fixture too small: %d tools, %d queries", len(snap.Tools()), len(queries))
	}
	d := New(Options{Mode: ModeProgressive})
	hits := 0
	for _, q := range queries {
		for _, e := range q.Expect {
			if _, ok := snap.Tool(e); !ok {
				t.Fatalf("query %q expects %s, which is not in the catalog", q.Query, e)
			}
		}
		res := d.Find(snap, Request{}, q.Query, q.Server, 3)
		var got []string
		for _, c := range res.Tools {
			got = append(got, c.Name)
		}
		if slices.ContainsFunc(q.Expect, func(e string) bool { return slices.Contains(got, e) }) {
			hits++
		} else {
			t.Logf("miss: %q -> %v, want one of %v", q.Query, got, q.Expect)
		}
	}
	p := float64(hits) / float64(len(queries))
	t.Logf("find_tools top-3 precision: %d/%d = %.2f over %d tools from %d servers", hits, len(queries), p, len(snap.Tools()), len(srcs))
	if p < 0.8 {
		t.Errorf("top-3 precision %.2f is below 0.8", p)
	}
}
