package gateway

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/host"
)

// Third-party executor plugins are the executable files of plugins.dirs
// (host.Discover). Each one is served as one source named after its file,
// unless the name is taken: by a built-in executor, by one of the
// gateway's own namespaces, or by a server of the config (the config
// wins: a file dropped into a folder must not take a configured server's
// place). A refused plugin is listed in Status as failed, saying why,
// under the name plugin:NAME. Start and every Reload read the dirs again.

// pluginScan is what the plugins dirs of a config hold.
type pluginScan struct {
	specs   []host.Spec           // the plugins to serve, sorted by name
	files   map[string]pluginFile // by name, for specs
	refused []SourceStatus        // the plugins refused, sorted by name
	skipped []error               // files that are no plugin (host.Discover's problems)
}

// pluginFile tells versions of a plugin's file apart: a reload restarts a
// plugin whose file moved or changed.
type pluginFile struct {
	path  string
	size  int64
	mtime int64 // UnixNano
}

func statPlugin(path string) pluginFile {
	f := pluginFile{path: path}
	if fi, err := os.Stat(path); err == nil {
		f.size, f.mtime = fi.Size(), fi.ModTime().UnixNano()
	}
	return f
}

// scanPlugins reads cfg's plugins dirs.
func scanPlugins(cfg *config.Config) pluginScan {
	specs, errs := host.Discover(cfg.Plugins.Dirs)
	scan := pluginScan{files: map[string]pluginFile{}, skipped: errs}
	now := time.Now()
	for _, s := range specs {
		if why := pluginRefusal(cfg, s); why != "" {
			scan.refused = append(scan.refused, SourceStatus{Name: refusedName(s.Name), Executor: s.Name, State: "failed", LastError: why, Since: now})
			continue
		}
		scan.specs = append(scan.specs, s)
		scan.files[s.Name] = statPlugin(s.Path)
	}
	slices.SortFunc(scan.specs, func(a, b host.Spec) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(scan.refused, func(a, b SourceStatus) int { return strings.Compare(a.Name, b.Name) })
	return scan
}

// refusedName is the name Status gives the refused plugin name: not a
// source's (the colon keeps it apart), as the name may be a server's.
func refusedName(name string) string { return "plugin:" + name }

// pluginRefusal says why the plugin s cannot be served under cfg, or "".
func pluginRefusal(cfg *config.Config, s host.Spec) string {
	switch {
	case builtin.Has(s.Name):
		return fmt.Sprintf("plugin %s: its name %q is a built-in executor's; rename the file", s.Path, s.Name)
	case config.IsReservedNamespace(s.Name):
		return fmt.Sprintf("plugin %s: its name %q is the namespace of the gateway's own tools (%s%s*); rename the file (the reserved names are %s)",
			s.Path, s.Name, s.Name, cfg.Names.Separator, strings.Join(config.ReservedNamespaces(), ", "))
	}
	if sv, ok := cfg.Servers[s.Name]; ok {
		where := "servers." + s.Name
		if sv != nil && sv.Pos.File != "" {
			where += " at " + sv.Pos.String()
		}
		return fmt.Sprintf("plugin %s: its name %q is taken by the server %q (%s); rename the file to serve both", s.Path, s.Name, s.Name, where)
	}
	return ""
}

// PluginProblems lists what keeps files of cfg's plugins dirs from being
// served as executor plugins: names that are taken (by a built-in
// executor, the gateway's own namespaces or a server of cfg) and files
// that are no plugin (not executable, a name that is not valid or
// already used by an earlier file). The gateway logs them and serves
// the other plugins; `skillgate validate` can show them up front.
func PluginProblems(cfg *config.Config) []string {
	scan := scanPlugins(cfg)
	var out []string
	for _, r := range scan.refused {
		out = append(out, r.LastError)
	}
	for _, err := range scan.skipped {
		out = append(out, err.Error())
	}
	return out
}

// pluginSources gives each third-party executor of scan one source named
// after it, loaded with an empty spec of its first kind.
func pluginSources(scan pluginScan, base int) []*source {
	out := make([]*source, 0, len(scan.specs))
	for i, sp := range scan.specs {
		f := scan.files[sp.Name]
		out = append(out, &source{
			id: sp.Name, execName: sp.Name, namespace: sp.Name, order: base + i, spec: json.RawMessage(`{}`),
			plugin: &f,
			st:     SourceStatus{Name: sp.Name, Executor: sp.Name, State: "starting", Since: time.Now()},
		})
	}
	return out
}

// applyPlugins makes scan the gateway's plugins: the executors know their
// specs, Status lists the refused ones, and the log tells of each problem
// the last scan did not have.
func (g *Gateway) applyPlugins(scan pluginScan) {
	g.execs.setPlugins(scan.specs)
	g.mu.Lock()
	before := map[string]SourceStatus{}
	for _, r := range g.refused {
		before[r.Name] = r
	}
	for i, r := range scan.refused {
		if b, ok := before[r.Name]; ok && b.LastError == r.LastError {
			scan.refused[i].Since = b.Since // refused since then
		}
	}
	g.refused = scan.refused
	skipped := map[string]bool{}
	for _, err := range scan.skipped {
		skipped[err.Error()] = true
	}
	skippedBefore := g.skipped
	g.skipped = skipped
	g.mu.Unlock()
	for _, r := range scan.refused {
		if before[r.Name].LastError != r.LastError {
			g.log.Error("plugin not served", "plugin", r.Executor, "err", r.LastError)
		}
	}
	for _, err := range scan.skipped {
		if !skippedBefore[err.Error()] {
			g.log.Warn("plugin skipped", "err", err)
		}
	}
}
