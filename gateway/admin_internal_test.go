package gateway

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestAdminWritesClassified: every management tool that is not marked
// readOnlyHint is one of adminWrites, which admin.writes guards, and
// adminWrites names only tools the groups serve: a tool added to a group
// without being classified fails here, not in an audit.
func TestAdminWritesClassified(t *testing.T) {
	g := &Gateway{}
	for _, group := range slices.Sorted(maps.Keys(adminGroups)) {
		var ex sdk.Executor = adminExec{g}
		if f := adminExecutors[group]; f != nil {
			ex = f(g)
		}
		defs, err := ex.Load(t.Context(), sdk.LoadRequest{Source: adminSourceID(group), Kind: "admin"})
		if err != nil {
			t.Fatalf("@%s: %v", group, err)
		}
		served := map[string]bool{}
		for _, raw := range defs.Tools {
			var def struct {
				Name        string `json:"name"`
				Annotations struct {
					ReadOnly bool `json:"readOnlyHint"`
				} `json:"annotations"`
			}
			if err := json.Unmarshal(raw, &def); err != nil {
				t.Fatalf("@%s: %s: %v", group, raw, err)
			}
			served[def.Name] = true
			write := slices.Contains(adminWrites[group], def.Name)
			if write == def.Annotations.ReadOnly {
				t.Errorf("@%s %s: readOnlyHint %v, but adminWrites lists it: %v; a tool that changes anything belongs in adminWrites, one that only reads is marked readOnlyHint",
					group, def.Name, def.Annotations.ReadOnly, write)
			}
		}
		for _, name := range adminWrites[group] {
			if !served[name] {
				t.Errorf("adminWrites names %s of @%s, which the group does not serve", name, group)
			}
		}
	}
	for group := range adminWrites {
		if _, ok := adminGroups[group]; !ok {
			t.Errorf("adminWrites names the group %s, which is not an admin group", group)
		}
	}
}
