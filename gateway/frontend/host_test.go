package frontend

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHostAllowedBeyondLoopback: DNS rebinding protection keeps a meaning
// on a listener beyond loopback without tokens: a request must name the
// gateway by an IP address, a loopback name or one of allowed_hosts (a
// rebound page names the attacker's domain). With tokens any host passes,
// as a page cannot send the token; on loopback the rule is unchanged.
func TestHostAllowedBeyondLoopback(t *testing.T) {
	lan := &net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 8811}
	loop := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8811}
	open := &HTTPOptions{AllowedHosts: []string{"gw.lan"}}
	tokens := &HTTPOptions{Tokens: []string{"s3cret"}}
	for _, c := range []struct {
		local net.Addr
		a     *HTTPOptions
		host  string
		want  bool
	}{
		{lan, open, "192.168.1.5:8811", true},
		{lan, open, "[fe80::1]:8811", true},
		{lan, open, "localhost:8811", true},
		{lan, open, "gw.lan:8811", true},
		{lan, open, "evil.example:8811", false},
		{lan, open, "evil.example", false},
		{lan, tokens, "evil.example:8811", true},
		{loop, open, "127.0.0.1:8811", true},
		{loop, open, "gw.lan", true},
		{loop, open, "192.168.1.5:8811", false},
		{loop, tokens, "evil.example:8811", false},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://"+c.host+"/mcp", nil)
		r.Host = c.host
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, c.local))
		if got := hostAllowed(c.a, r); got != c.want {
			t.Errorf("listener %s, tokens %v, Host %s: allowed %v, want %v", c.local, c.a.Tokens, c.host, got, c.want)
		}
	}
}
