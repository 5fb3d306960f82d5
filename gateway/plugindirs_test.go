package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// TestReloadPluginDirs changes plugins.dirs and their contents under a
// running gateway: a reload starts the plugins that appeared (a new file,
// a new dir), stops the ones that went (a file removed, plugins: removed),
// restarts the one whose file changed and keeps the others running, and
// its log says so.
func TestReloadPluginDirs(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	installProbe(t, dirA, "p1")
	plugins := func(dirs ...string) string {
		if len(dirs) == 0 {
			return "servers: {}\n"
		}
		return "plugins: {dirs: [" + strings.Join(dirs, ", ") + "]}\n"
	}
	r := startGateway(t, plugins(dirA), nil)
	r.waitReady(t, "p1")
	pids := executorPIDs(r.gw)
	p1 := pids["p1"]
	if p1 == 0 || !testenv.Alive(p1) {
		t.Fatalf("p1 has no live process: %v", pids)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reload := func(yaml string) {
		t.Helper()
		cfg, err := config.Parse(strings.NewReader(yaml), "test.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.gw.Reload(ctx, cfg); err != nil {
			t.Fatalf("Reload: %v", err)
		}
	}
	served := func(tool string) bool {
		_, ok := r.gw.Snapshot().Tool(tool)
		return ok
	}
	// reloaded checks the last reload's log line for what it says, and
	// that p1, never changed, still runs in its first process.
	reloaded := func(t *testing.T, says string) {
		t.Helper()
		lines := strings.Split(r.log.String(), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.Contains(lines[i], `msg="config reloaded"`) {
				if !strings.Contains(lines[i], says) {
					t.Errorf("the reload's log does not say %s: %s", says, lines[i])
				}
				break
			}
		}
		if got := executorPIDs(r.gw)["p1"]; got != p1 {
			t.Errorf("p1 was restarted by a reload that did not change it: pid %d, then %d", p1, got)
		}
	}

	t.Run("new file", func(t *testing.T) {
		installProbe(t, dirA, "p2")
		reload(plugins(dirA))
		st := r.waitReady(t, "p1", "p2")
		if !served("p2__pid") {
			t.Errorf("p2 is %+v but p2__pid is not served", st["p2"])
		}
		reloaded(t, "added=[p2]")
	})

	t.Run("new dir", func(t *testing.T) {
		installProbe(t, dirB, "p3")
		reload(plugins(dirA, dirB))
		r.waitReady(t, "p1", "p2", "p3")
		if !served("p3__pid") {
			t.Errorf("p3__pid is not served")
		}
		reloaded(t, "added=[p3]")
	})

	t.Run("file removed", func(t *testing.T) {
		p2 := executorPIDs(r.gw)["p2"]
		if err := os.Remove(filepath.Join(dirA, "p2")); err != nil {
			t.Fatal(err)
		}
		reload(plugins(dirA, dirB))
		if st := r.status(t); st["p2"].Name != "" {
			t.Errorf("/readyz still lists p2 after its file was removed: %+v", st["p2"])
		}
		if served("p2__pid") {
			t.Errorf("p2__pid is still served after p2's file was removed")
		}
		if _, ok := executorPIDs(r.gw)["p2"]; ok {
			t.Errorf("the executors still list p2: %+v", r.gw.ExecutorsStatus())
		}
		waitGone(t, p2, "the removed plugin p2")
		reloaded(t, "stopped=[p2]")
	})

	t.Run("file back", func(t *testing.T) {
		installProbe(t, dirA, "p2")
		reload(plugins(dirA, dirB))
		r.waitReady(t, "p2")
		if text, _ := toolText(t, r, "p2__pid", `{}`); text == "" || text == strconv.Itoa(p1) {
			t.Errorf("p2__pid = %q", text)
		}
	})

	t.Run("file changed", func(t *testing.T) {
		path := filepath.Join(dirB, "p3")
		before := executorPIDs(r.gw)["p3"]
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("# a new version\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		reload(plugins(dirA, dirB))
		r.waitReady(t, "p3")
		if after := executorPIDs(r.gw)["p3"]; after == 0 || after == before {
			t.Errorf("p3's file changed and the reload kept its process: pid %d, then %d", before, after)
		}
		waitGone(t, before, "the old process of p3")
		reloaded(t, "restarted=[p3]")
	})

	t.Run("plugins removed", func(t *testing.T) {
		before := executorPIDs(r.gw)
		reload(plugins())
		st := r.status(t)
		for _, n := range []string{"p1", "p2", "p3"} {
			if st[n].Name != "" {
				t.Errorf("/readyz still lists %s after plugins: was removed: %+v", n, st[n])
			}
			if served(n + "__pid") {
				t.Errorf("%s__pid is still served after plugins: was removed", n)
			}
			waitGone(t, before[n], "the plugin "+n)
		}
	})
}

// TestPluginNameClashes puts plugins into a plugins dir whose names are
// taken: one by a server of the config, others by the gateway's own
// namespaces. Each is refused, and says so where the operator looks: the
// log, /readyz and `skillgate servers` (Status, as plugin:NAME), with the
// plugin's path and what to do; none of their tools is served.
func TestPluginNameClashes(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	dir := t.TempDir()
	mine := installProbe(t, dir, "mine")
	admin := installProbe(t, dir, "admin")
	tools := installProbe(t, dir, "tools")
	installProbe(t, dir, "fine")
	yaml := richServers(bin, "mine=mine") + "plugins: {dirs: [" + dir + "]}\n"
	r := startGateway(t, yaml, nil)
	r.waitReady(t, "mine", "fine")

	var body struct {
		Sources []gateway.SourceStatus `json:"sources"`
	}
	r.readyz(t, &body)
	refused := map[string]gateway.SourceStatus{}
	for _, s := range body.Sources {
		if s.Name == "plugin:"+s.Executor {
			refused[s.Executor] = s
		}
	}
	for name, path := range map[string]string{"mine": mine, "admin": admin, "tools": tools} {
		s := refused[name]
		if s.State != "failed" || !strings.Contains(s.LastError, path) || !strings.Contains(s.LastError, "rename") {
			t.Errorf("/readyz for the plugin %s: %+v; want it failed, naming %s and saying to rename it", name, s, path)
		}
	}
	if s := refused["mine"]; !strings.Contains(s.LastError, `server "mine"`) {
		t.Errorf("the plugin mine's error does not name the server that has its name: %q", s.LastError)
	}
	cfg, err := config.Parse(strings.NewReader(yaml), "test.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if probs := gateway.PluginProblems(cfg); len(probs) != 3 {
		t.Errorf("PluginProblems: %q; want the three refused plugins", probs)
	}
	snap := r.gw.Snapshot()
	for _, tool := range []string{"admin__pid", "tools__pid", "mine__pid"} {
		if _, ok := snap.Tool(tool); ok {
			t.Errorf("%s is served: a refused plugin's tools must not be", tool)
		}
	}
	if _, ok := snap.Tool("fine__pid"); !ok {
		t.Errorf("fine__pid is not served")
	}
	log := r.log.String()
	if strings.Contains(log, "its name is taken source=mine") {
		t.Errorf("the log says only that a name is taken:\n%s", log)
	}
	if !strings.Contains(log, mine) {
		t.Errorf("the log does not name the refused plugin's path %s", mine)
	}
}
