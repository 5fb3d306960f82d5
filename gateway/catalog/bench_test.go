package catalog

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// benchSources returns n tools over 10 sources with a realistic schema; the
// first two sources have no namespace, so a tenth of the tools collide.
func benchSources(n int) []Source {
	srcs := make([]Source, 10)
	for i := range srcs {
		srcs[i] = Source{ID: fmt.Sprint("server", i), Order: i}
		if i >= 2 {
			srcs[i].Namespace = fmt.Sprint("s", i)
		}
	}
	for i := 0; i < n; i++ {
		raw := fmt.Sprintf(`{"name":"tool_%d","description":"Does thing %d with the input.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"A path."},"limit":{"type":"integer"}},"required":["path"]},"annotations":{"readOnlyHint":true}}`, i/2, i)
		s := &srcs[i%len(srcs)]
		s.Defs.Tools = append(s.Defs.Tools, json.RawMessage(raw))
	}
	return srcs
}

func BenchmarkBuild1000Tools(b *testing.B) {
	srcs := benchSources(1000)
	b.ReportAllocs()
	for b.Loop() {
		Build(srcs, Options{Reserved: []string{"find_tools"}})
	}
}

func BenchmarkTool(b *testing.B) {
	s := Build(benchSources(1000), Options{})
	names := make([]string, 0, len(s.Tools()))
	for _, it := range s.Tools() {
		names = append(names, it.Name)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := s.Tool(names[i%len(names)]); !ok {
			b.Fatal("missing")
		}
		i++
	}
}

func BenchmarkStoreLoadTool(b *testing.B) {
	st := NewStore(Options{})
	st.Reload(Options{}, benchSources(1000))
	name := st.Load().Tools()[500].Name
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := st.Load().Tool(name); !ok {
				b.Fatal("missing")
			}
		}
	})
}

func BenchmarkMatchTemplate(b *testing.B) {
	var raws []json.RawMessage
	for i := 0; i < 50; i++ {
		raws = append(raws, json.RawMessage(fmt.Sprintf(`{"uriTemplate":"repo%d://{owner}/{repo}/blob{/path}"}`, i)))
	}
	s := Build([]Source{{ID: "a", Defs: sdk.Definitions{ResourceTemplates: raws}}}, Options{})
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := s.MatchTemplate("repo49://owner/repo/blob/src/pkg/file.go"); !ok {
			b.Fatal("no match")
		}
	}
}
