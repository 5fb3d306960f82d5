package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
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

// PluginFiles lists the executor plugins that the plugins dirs of cfg
// hold and the gateway would start, sorted by name (PluginProblems lists
// the other files): `skillgate validate` shows them, without running
// them.
func PluginFiles(cfg *config.Config) []host.Spec {
	return scanPlugins(cfg).specs
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

// boundedLoader is an executor that bounds a Load itself, restarting a
// process that does not answer in time (host.Plugin.LoadWithin).
type boundedLoader interface {
	LoadWithin(ctx context.Context, req sdk.LoadRequest, d time.Duration) (sdk.Definitions, error)
}

var _ boundedLoader = (*host.Plugin)(nil)

// loadWithin loads req into ex, the executor of s, within s's
// loadTimeout: a plugin whose Load ignores its context fails that load
// (and is restarted) instead of holding the gateway's start, and the slot
// of launchSources, for good.
func (g *Gateway) loadWithin(ctx context.Context, s *source, ex sdk.Executor, req sdk.LoadRequest) (sdk.Definitions, error) {
	d := g.loadTimeout(s)
	if d <= 0 {
		return ex.Load(ctx, req)
	}
	if b, ok := ex.(boundedLoader); ok {
		return b.LoadWithin(ctx, req, d)
	}
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	defs, err := ex.Load(lctx, req)
	if err != nil && ctx.Err() == nil && lctx.Err() != nil {
		err = fmt.Errorf("executor %q did not answer Load within %s; it must return from Load or honour its context; see docs/EXECUTORS.md: %w", s.execName, d, err)
	}
	return defs, err
}

// loadTimeout is how long the executor of s gets to answer its Load:
// limits.load_timeout, but no bound for a configured server, whose load
// the mcp executor bounds itself with the server's start_timeout (30s,
// 2m for a package runner such as npx, or what the entry sets), so that a
// slow first download is never cut short.
func (g *Gateway) loadTimeout(s *source) time.Duration {
	if s.server != nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return time.Duration(g.cfg.Limits.LoadTimeout)
}

// logChange logs a change of state that the executor of s reported
// through Watch; prev was the state of s, loaded says whether s had
// loaded. A load tells its own outcome, and the built-in executors log
// their sources' changes themselves ("upstream failed"), so this is for
// a loaded source of a third-party executor: a failure at Error (once
// per distinct error, see failureLevel), the source ready again at Info.
func (g *Gateway) logChange(s *source, prev string, loaded bool, st sdk.Status) {
	if !loaded || builtin.Has(s.execName) {
		return
	}
	switch {
	case st.State == "failed":
		g.log.Log(context.Background(), s.failureLevel(errors.New(st.LastError)), "source failed",
			"source", s.id, "executor", s.execName, "err", st.LastError)
	case st.State == "ready" && prev != "ready":
		s.mu.Lock()
		s.failLogged = "" // a failure after this one is news
		s.mu.Unlock()
		g.log.Info("source ready again", "source", s.id, "executor", s.execName)
	}
}

// logBadDefs logs each definition of defs, which s's executor listed, that
// the catalog drops as unreadable: not valid JSON, not a JSON object, or
// without its name (uri for a resource): with its index, its first bytes
// and what is wrong, which the catalog's own warning does not say.
func (g *Gateway) logBadDefs(s *source, defs sdk.Definitions) {
	for _, l := range []struct {
		kind, key string
		defs      []json.RawMessage
	}{
		{"tool", "name", defs.Tools}, {"prompt", "name", defs.Prompts},
		{"resource", "uri", defs.Resources}, {"resource template", "uriTemplate", defs.ResourceTemplates},
	} {
		for i, raw := range l.defs {
			if why := defProblem(raw, l.key); why != "" {
				g.log.Warn("source listed a "+l.kind+" definition that cannot be served; it is dropped: fix it in the executor",
					"source", s.id, "executor", s.execName, "index", i, "problem", why, "start", oneline.Cut(string(raw), 60))
			}
		}
	}
}

// defProblem says why the definition raw cannot be served for want of
// the string field key, or "".
func defProblem(raw json.RawMessage, key string) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "it is not valid JSON: " + err.Error()
	}
	obj, ok := v.(map[string]any)
	if !ok {
		kind := "JSON null"
		switch v.(type) {
		case []any:
			kind = "a JSON array"
		case string:
			kind = "a JSON string"
		case float64:
			kind = "a JSON number"
		case bool:
			kind = "a JSON boolean"
		}
		return fmt.Sprintf("it is %s, not an object", kind)
	}
	switch name, isString := obj[key].(string); {
	case obj[key] != nil && !isString:
		return fmt.Sprintf("its %q is not a string", key)
	case name == "":
		return fmt.Sprintf("it has no %q", key)
	}
	return ""
}
