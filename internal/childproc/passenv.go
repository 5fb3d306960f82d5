package childproc

import "strings"

// ProxyEnv names the variables that tell a program how to reach the
// network the way the gateway does: proxies, the certificates to trust
// (a company's TLS-inspecting proxy) and package indexes. Script tools
// (unless limits.no_proxy_env) and stdio MCP servers receive those the
// gateway's environment sets; none is meant to hold a secret (a proxy
// URL's password is masked as every URL's is).
var ProxyEnv = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
	"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "npm_config_registry", "NPM_CONFIG_REGISTRY", "npm_config_cache",
}

// PassEnv returns the variables of environ (KEY=value entries, as
// os.Environ gives them) that one of names names: a variable's name, or a
// prefix ending in * ("AWS_*" is every variable whose name starts with
// AWS_). Names match without case on Windows. A name environ does not set
// is simply absent. Keys are spelled as environ spells them.
func PassEnv(environ, names []string) map[string]string { return passEnv(environ, names, foldEnv) }

func passEnv(environ, names []string, fold bool) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue // Windows lists "=C:=C:\dir" entries: per-drive directories
		}
		for _, n := range names {
			if matchName(k, n, fold) {
				out[k] = v
				break
			}
		}
	}
	return out
}

// matchName reports whether the variable k is what pattern names: the
// same name, or a name that starts with pattern's prefix before a final *.
func matchName(k, pattern string, fold bool) bool {
	prefix, glob := strings.CutSuffix(pattern, "*")
	if !glob {
		return sameKey(k, pattern, fold)
	}
	return prefix != "" && len(k) >= len(prefix) && sameKey(k[:len(prefix)], prefix, fold)
}
