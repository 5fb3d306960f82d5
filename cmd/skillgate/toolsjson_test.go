package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestToolsListJSONShape: `tools list --json` prints the same entries from
// the config as from a running gateway (--url): name, description, server,
// group, listed, and original when it knows it. Both decode into that
// shape with no field left over, and agree on every tool.
func TestToolsListJSONShape(t *testing.T) {
	bin := buildSkillgate(t)
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	argv := testenv.NodeServer(t, "server-everything")
	cfg := t.TempDir() + "/skillgate.yaml"
	writeFile(t, cfg, "listen: {http: "+addr+"}\nservers:\n  everything:\n    command: "+argv[0]+"\n    args: ["+strings.Join(argv[1:], ", ")+"]\n")
	p := testenv.Start(t, exec.Command(bin, "run", "-c", cfg))
	if err := p.WaitTCP(addr, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	waitEverythingReady(t, bin, addr, p)
	type entry struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Server      string `json:"server"`
		Group       string `json:"group"`
		Listed      bool   `json:"listed"`
		Original    string `json:"original"`
	}
	decode := func(args ...string) map[string]entry {
		t.Helper()
		out, stderr, code := runBin(t, bin, append([]string{"tools", "list", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("tools list --json %v: exit %d\n%s", args, code, stderr)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &top); err != nil {
			t.Fatalf("tools list --json %v: %v\n%s", args, err, out)
		}
		dec := json.NewDecoder(bytes.NewReader(top["tools"]))
		dec.DisallowUnknownFields()
		var list []entry
		if err := dec.Decode(&list); err != nil || len(list) == 0 {
			t.Fatalf("tools list --json %v: the tools are not in the documented shape: %v\n%s", args, err, top["tools"])
		}
		m := map[string]entry{}
		for _, e := range list {
			m[e.Name] = e
		}
		return m
	}
	local := decode("-c", cfg)
	remote := decode("--url", addr)
	if l, r := slices.Sorted(maps.Keys(local)), slices.Sorted(maps.Keys(remote)); !slices.Equal(l, r) {
		t.Fatalf("the tools differ:\nconfig %v\n--url  %v", l, r)
	}
	echo := local["everything__echo"]
	if echo.Server != "everything" || echo.Original != "echo" || echo.Description == "" || !echo.Listed {
		t.Errorf("everything__echo from the config: %+v", echo)
	}
	for name, l := range local {
		r := remote[name]
		l.Original = "" // the running gateway does not tell it
		if l != r {
			t.Errorf("%s: from the config %+v, from --url %+v", name, l, r)
		}
	}
}
