package catalog_test

import (
	"encoding/json"
	"fmt"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

func Example() {
	st := catalog.NewStore(catalog.Options{Reserved: []string{"find_tools"}})
	st.SetSource(catalog.Source{ID: "github", Namespace: "gh", Defs: sdk.Definitions{
		Tools: []json.RawMessage{json.RawMessage(`{"name":"search","inputSchema":{"type":"object"}}`)},
	}})
	snap := st.SetSource(catalog.Source{ID: "local", Order: 1, Defs: sdk.Definitions{
		Tools: []json.RawMessage{json.RawMessage(`{"name":"find_tools","inputSchema":{"type":"object"},"x-extra":1}`)},
	}})

	// The hot path: one atomic load, then map lookups.
	if it, ok := st.Load().Tool("gh__search"); ok {
		fmt.Println("route", it.Name, "to", it.Source, it.Original)
	}
	fmt.Printf("%s\n", snap.ToolsJSON())
	for _, c := range snap.Conflicts() {
		fmt.Println(c.Name, "->", c.Renamed+":", c.Resolution)
	}
	// Output:
	// route gh__search to github search
	// [{"name":"gh__search","inputSchema":{"type":"object"}},{"name":"local__find_tools","inputSchema":{"type":"object"},"x-extra":1}]
	// find_tools -> local__find_tools: renamed: reserved name
}
