package script

import (
	"os"
	"path/filepath"
	"strings"
)

// baseEnv are the variables of the executor's environment every tool gets.
var baseEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}

// proxyEnv are passed too, unless the spec's Limits.NoProxyEnv is set, so
// tools reach the network the way the gateway does.
var proxyEnv = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
}

// env builds the tool's environment from nothing: the small base list,
// proxy/TLS variables, the names the tool declares under env and secrets,
// and skillgate's own SKILLGATE_STATE_DIR, SKILLGATE_TOOL and
// SKILLGATE_TOOL_DIR. Nothing else of the executor's environment (tokens,
// the plugin handshake cookie, undeclared SKILLGATE_* secrets) reaches it.
func (t *tool) env(deps *installed) []string {
	tl := &t.spec.Tool
	set := map[string]string{}
	pass := func(names []string) {
		for _, n := range names {
			if v, ok := os.LookupEnv(n); ok {
				set[n] = v
			}
		}
	}
	pass(baseEnv)
	if !t.spec.Limits.NoProxyEnv {
		pass(proxyEnv)
	}
	pass(tl.Env)
	pass(tl.Secrets)
	if t.spec.Tool.Sandbox.Enabled {
		set["TMPDIR"] = "/tmp"
		if t.cred != nil {
			set["HOME"] = "/tmp"
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
