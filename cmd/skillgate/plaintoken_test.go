package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestStatusCommandsKeepTokenOffPlainHTTP: servers and profiles --url read
// /readyz and /stats over plain HTTP; like the MCP commands, they refuse
// to send the token in plain text to a host that is not this machine
// (192.0.2.1 is a documentation address: the refusal comes before any
// connection), and send it to a loopback gateway as before.
func TestStatusCommandsKeepTokenOffPlainHTTP(t *testing.T) {
	t.Setenv("SKILLGATE_TOKEN", "s3cret-token-value")
	t.Setenv("SKILLGATE_ALLOW_INSECURE", "")
	for _, args := range [][]string{{"servers"}, {"profiles"}} {
		_, _, err := runCLI(t, append(args, "--url", "http://192.0.2.1:9")...)
		if err == nil || !strings.Contains(err.Error(), "plain text") || !strings.Contains(err.Error(), "SKILLGATE_ALLOW_INSECURE=1") {
			t.Errorf("%s --url http://192.0.2.1:9 with a token: %v; want a refusal naming https:// and SKILLGATE_ALLOW_INSECURE=1", args[0], err)
		}
	}

	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	_, _, _ = runCLI(t, "servers", "--url", srv.URL)
	if a, _ := got.Load().(string); a != "Bearer s3cret-token-value" {
		t.Errorf("servers --url %s (loopback) sent Authorization %q; want the token", srv.URL, a)
	}
}
