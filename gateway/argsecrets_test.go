package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVariablesInArgsAndURLMasked: a stdio server that echoes its argv on
// failure (as argparse does) and remote servers that cannot be reached.
// What a ${VAR} named like a credential, or holding a token-shaped value,
// gave args, and what a ${VAR} gave a URL's path or userinfo, stays out of
// /readyz and the log; an ordinary path from ${VAR} still shows.
func TestVariablesInArgsAndURLMasked(t *testing.T) {
	needInterpreters(t, "python3")
	const (
		apiKey  = "plain-SECRET-abcdef"                     // MY_API_KEY: named like a credential
		shaped  = "ghp_SHAPEDabcdefghijklmnopqrstuv0123456" // OPTS: a token by its shape
		urlKey  = "zap-SECRET-path123456"                   // ZAP_ID: in a URL's path
		userKey = "user-SECRET-info123456"                  // ZAP_USER: a username-only userinfo
	)
	dir := t.TempDir()
	srv := filepath.Join(dir, "argparse_srv.py")
	if err := os.WriteFile(srv, []byte("import argparse\np = argparse.ArgumentParser()\np.add_argument('--port', type=int)\np.parse_args()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plainDir := filepath.Join(dir, "visible-folder")
	r := startGateway(t, `
servers:
  a:
    command: python3
    args: [`+srv+`, --api-key, "${MY_API_KEY}", --opts, "${OPTS}", --dir, "${PLAIN_DIR}/sub"]
  zap: {url: "http://127.0.0.1:1/mcp/${ZAP_ID}/sse"}
  userinfo: {url: "http://${ZAP_USER}@127.0.0.1:1/mcp"}
`, map[string]string{"MY_API_KEY": apiKey, "OPTS": shaped, "ZAP_ID": urlKey, "ZAP_USER": userKey, "PLAIN_DIR": plainDir})
	failed := func(name, want string) string {
		t.Helper()
		var lastErr string
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(lastErr, want); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no last error with %q for %s: %+v", want, name, r.status(t)[name])
			}
			lastErr = r.status(t)[name].LastError
		}
		return lastErr
	}
	texts := map[string]string{
		"a's last_error":        failed("a", "unrecognized arguments"),
		"zap's last_error":      failed("zap", "127.0.0.1:1"),
		"userinfo's last_error": failed("userinfo", "127.0.0.1:1"),
	}
	texts["the log"] = r.log.String()
	for what, text := range texts {
		for _, v := range []string{"plain-SECRET", "ghp_SHAPED", "zap-SECRET", "user-SECRET"} {
			if strings.Contains(text, v) {
				t.Errorf("%s shows %q:\n%s", what, v, text)
			}
		}
	}
	if !strings.Contains(texts["a's last_error"], plainDir+"/sub") {
		t.Errorf("a's last_error = %q; want the ordinary path from ${PLAIN_DIR} shown", texts["a's last_error"])
	}
}
