package gateway_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
)

// TestDialRemoteRefusesPlainTokenBeyondLoopback: `--url` with a token
// over plain http:// to a host that is not this machine is refused before
// anything is sent, saying what to do; with SKILLGATE_ALLOW_INSECURE=1 the
// token is sent, with a warning; over loopback it is sent without one.
func TestDialRemoteRefusesPlainTokenBeyondLoopback(t *testing.T) {
	ip := nonLoopbackIP(t)
	var mu sync.Mutex
	var seen []string // the Authorization headers that arrived
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "not an MCP server", http.StatusTeapot)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	arrived := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
	dial := func(rawURL string) (string, error) {
		var logs bytes.Buffer
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		r, err := gateway.DialRemote(ctx, slog.New(slog.NewTextHandler(&logs, nil)), rawURL, "s3cret")
		if err == nil {
			r.Close()
		}
		return logs.String(), err
	}

	remote := "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(port))
	for _, u := range []string{remote, strings.TrimPrefix(remote, "http://")} {
		t.Setenv(gateway.AllowInsecureEnv, "")
		logs, err := dial(u)
		if err == nil || !strings.Contains(err.Error(), "plain text") || !strings.Contains(err.Error(), gateway.AllowInsecureEnv+"=1") {
			t.Errorf("--url %s with a token: %v; want a refusal that names https:// and %s=1", u, err, gateway.AllowInsecureEnv)
		}
		if got := arrived(); len(got) > 0 {
			t.Errorf("--url %s: the token was sent (%q) although it was refused; logs: %s", u, got, logs)
		}
	}

	t.Setenv(gateway.AllowInsecureEnv, "1")
	logs, _ := dial(remote)
	if got := arrived(); len(got) == 0 || got[0] != "Bearer s3cret" {
		t.Errorf("with %s=1 the token should be sent; the server saw %q", gateway.AllowInsecureEnv, got)
	}
	if !strings.Contains(logs, "plain text") {
		t.Errorf("with %s=1: no warning in the log:\n%s", gateway.AllowInsecureEnv, logs)
	}

	t.Setenv(gateway.AllowInsecureEnv, "")
	lo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	local := &http.Server{Handler: srv.Handler, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = local.Serve(lo) }()
	t.Cleanup(func() { _ = local.Close() })
	logs, err = dial(lo.Addr().String())
	if err != nil && strings.Contains(err.Error(), "plain text") {
		t.Errorf("loopback --url refused: %v", err)
	}
	if strings.Contains(logs, "plain text") {
		t.Errorf("loopback --url warned:\n%s", logs)
	}
	if got := arrived(); len(got) == 0 || got[0] != "Bearer s3cret" {
		t.Errorf("over loopback the token should be sent; the server saw %q", got)
	}
}

// nonLoopbackIP is an address of this machine that is not a loopback one,
// for a listener the test reaches as a remote host.
func nonLoopbackIP(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP
		}
	}
	t.Skip("this machine has no IPv4 address besides loopback")
	return nil
}
