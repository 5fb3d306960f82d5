package gateway

import (
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/config"
)

// TestSameServices: a reload swaps the service manager only when services
// or docker settings changed, not when they merely moved in the file.
func TestSameServices(t *testing.T) {
	parse := func(y string) *config.Config {
		t.Helper()
		c, err := config.Parse(strings.NewReader(y), "s.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := parse("services:\n  kv: {image: kv:1, ports: [\"6379\"]}\n")
	moved := parse("# a comment pushes it down\n\nservices:\n  kv: {image: kv:1, ports: [\"6379\"]}\n")
	changed := parse("services:\n  kv: {image: kv:2, ports: [\"6379\"]}\n")
	added := parse("services:\n  kv: {image: kv:1, ports: [\"6379\"]}\n  db: {image: db:1}\n")
	project := parse("docker: {project: other}\nservices:\n  kv: {image: kv:1, ports: [\"6379\"]}\n")
	if !sameServices(base, moved) {
		t.Error("services that only moved in the file count as changed")
	}
	for name, c := range map[string]*config.Config{"changed image": changed, "added service": added, "other project": project} {
		if sameServices(base, c) {
			t.Errorf("%s: counted as the same services", name)
		}
	}
}
