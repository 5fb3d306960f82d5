package script

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/skillgate/skillgate/internal/childproc"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// baseEnv are the variables of the executor's environment every tool gets.
var baseEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}

// proxyEnv are passed too, unless the spec's Limits.NoProxyEnv is set, so
// tools reach the network the way the gateway does.
var proxyEnv = childproc.ProxyEnv

// env builds the tool's environment from nothing: the small base list,
// proxy/TLS variables, the names the tool declares under env and secrets,
// and skillgate's own SKILLGATE_STATE_DIR, SKILLGATE_TOOL and
// SKILLGATE_TOOL_DIR. Nothing else of the executor's environment (tokens,
// the plugin handshake cookie, undeclared SKILLGATE_* secrets) reaches it.
func (t *tool) env(deps *installed) []string {
	tl := &t.spec.Tool
	set := map[string]string{}
	// The executor's own environment holds PATH, HOME and TMPDIR; what the
	// gateway resolved for the tool (Spec.Environ) holds the rest.
	pass := func(lookup func(string) (string, bool), names []string) {
		for _, n := range names {
			if v, ok := lookup(n); ok {
				set[n] = v
			}
		}
	}
	pass(os.LookupEnv, baseEnv)
	pass(t.spec.Lookup, toolspec.SharedEnv.Locale)
	if !t.spec.Limits.NoProxyEnv {
		pass(t.spec.Lookup, proxyEnv)
	}
	pass(t.spec.Lookup, tl.Env)
	pass(t.spec.Lookup, tl.Secrets)
	if t.spec.Tool.Sandbox.Enabled {
		set["TMPDIR"] = "/tmp"
		if t.cred != nil {
			set["HOME"] = "/tmp"
		}
	}
	if w := t.wiring.Load(); w != nil {
		for k, v := range *w {
			if validEnvName(k) {
				set[k] = v
			}
		}
	}
	set["SKILLGATE_STATE_DIR"] = t.spec.StateDir
	set["SKILLGATE_TOOL"] = tl.Name
	set["SKILLGATE_TOOL_DIR"] = t.spec.Dir
	set["PYTHONUNBUFFERED"] = "1"
	set["PYTHONDONTWRITEBYTECODE"] = "1"
	if deps != nil {
		if deps.venv != "" {
			set["VIRTUAL_ENV"] = deps.venv
			set["PATH"] = filepath.Join(deps.venv, "bin") + string(os.PathListSeparator) + set["PATH"]
		}
		if deps.nodeModules != "" {
			set["NODE_PATH"] = deps.nodeModules
		}
	}
	out := make([]string, 0, len(set))
	for k, v := range set {
		if !strings.ContainsRune(v, 0) {
			out = append(out, k+"="+v)
		}
	}
	sortStrings(out)
	return out
}

// validEnvName accepts the names services are wired with: letters, digits
// and underscores, not starting with a digit.
func validEnvName(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
