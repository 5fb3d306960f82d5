package catalog

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

var nameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// tool returns a minimal tool definition named name.
func tool(name string) json.RawMessage {
	n, _ := json.Marshal(name)
	return json.RawMessage(`{"name":` + string(n) + `,"inputSchema":{"type":"object"}}`)
}

func tools(names ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(names))
	for i, n := range names {
		out[i] = tool(n)
	}
	return out
}

func resource(uri string) json.RawMessage {
	u, _ := json.Marshal(uri)
	return json.RawMessage(`{"uri":` + string(u) + `,"name":"r"}`)
}

// exposed maps each exposed tool name to its "source/original".
func exposed(s *Snapshot) map[string]string {
	m := make(map[string]string)
	for _, it := range s.Tools() {
		m[it.Name] = it.Source + "/" + it.Original
	}
	return m
}

func checkNames(t *testing.T, s *Snapshot) {
	t.Helper()
	for _, list := range [][]*Item{s.Tools(), s.Prompts()} {
		for _, it := range list {
			if !nameRe.MatchString(it.Name) {
				t.Errorf("exposed name %q does not match %s", it.Name, nameRe)
			}
		}
	}
}

func defs(tools []json.RawMessage) sdk.Definitions { return sdk.Definitions{Tools: tools} }
