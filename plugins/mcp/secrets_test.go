package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestStdioEnvSecretsMasked runs a stdio upstream that prints its
// environment on stderr and stdout, in a stderr line cut at the length
// limit, and in a JSON-RPC error, then exits. The values of env entries
// named like credentials and of those the spec lists in secrets stay out
// of the log, the errors and the status; other values, and credential
// values too short to mask, still show.
func TestStdioEnvSecretsMasked(t *testing.T) {
	const (
		token   = "tok-SECRET-123456"   // API_TOKEN: named like a credential
		fromVar = "var-SECRET-abcdef"   // FROM_VAR: listed in secrets (a ${VAR} in the config)
		plain   = "plain-value-visible" // FAULT_ENV: no secret
		short   = "k3y"                 // SHORT_KEY: too short to mask
	)
	leaks := func(what, text string) {
		t.Helper()
		// "tok-SECRET" is what a line cut at the limit keeps of token.
		for _, v := range []string{token, fromVar, "tok-SECRET", "var-SECRET"} {
			if strings.Contains(text, v) {
				t.Errorf("%s shows %q:\n%s", what, v, tailString(text, 4000))
			}
		}
	}
	env := map[string]string{"API_TOKEN": token, "FROM_VAR": fromVar, "FAULT_ENV": plain, "SHORT_KEY": short}
	spec := func(args ...string) map[string]any {
		s := fault(append([]string{"-echo-env", "API_TOKEN,FROM_VAR,FAULT_ENV,SHORT_KEY"}, args...)...)
		s["env"], s["secrets"] = env, []string{fromVar}
		return s
	}
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A server that fails at start: the load error and the status carry
	// its stderr and stdout.
	_, err := h.c.Load(ctx, sdk.LoadRequest{Source: "dead", Kind: Kind, Spec: mustJSON(spec("-exit-at-start"))})
	if err == nil || !strings.Contains(err.Error(), "FAULT_ENV="+plain) || !strings.Contains(err.Error(), "SHORT_KEY="+short) {
		t.Fatalf("load error = %v; want the stderr tail with the values that are no secrets", err)
	}
	leaks("the load error", err.Error())
	for _, st := range h.statuses("dead") {
		leaks("the status", st.LastError)
	}

	// A server that echoes its environment in an error, then exits.
	h.load("s", spec())
	_, err = h.call("s", "rpcerror", map[string]any{"expand": true,
		"message": "refused $API_TOKEN and $FROM_VAR, kept $FAULT_ENV", "data": `{"echo":"$API_TOKEN $FROM_VAR"}`}, nil)
	var re *sdk.RPCError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "kept "+plain) {
		t.Fatalf("call error = %v; want the upstream's JSON-RPC error", err)
	}
	leaks("the call error", err.Error())
	leaks("the call error's data", string(re.Data))
	_, err = h.call("s", "exit", nil, nil)
	isUnavailable(t, err, "s", "exit status 7")
	leaks("the error of the call the upstream died in", err.Error())
	h.waitChange(20*time.Second, "s failed", func(ch sdk.Change) bool {
		return ch.Source == "s" && ch.Status != nil && strings.Contains(ch.Status.LastError, "exit status 7")
	})
	for _, st := range h.statuses("s") {
		leaks("the status", st.LastError)
	}

	logs := h.logs.String()
	if !strings.Contains(logs, "FAULT_ENV="+plain) || !strings.Contains(logs, "SHORT_KEY="+short) || !strings.Contains(logs, "exiting with status 7") {
		t.Fatalf("the log misses the upstream's output:\n%s", tailString(logs, 4000))
	}
	leaks("the log", logs)
}

// TestStdioWireMasksOutput: the stdio wire masks the secrets in what the
// server writes as it arrives, so that its log (here not masked again),
// its stderr tail and its cause of death never hold them, not even cut.
func TestStdioWireMasksOutput(t *testing.T) {
	const token, plain = "tok-SECRET-123456", "plain-value-visible"
	spec := &Spec{Command: faultServer, Args: []string{"-echo-env", "API_TOKEN,FAULT_ENV", "-exit-at-start"},
		Env: map[string]string{"API_TOKEN": token, "FAULT_ENV": plain}, ShutdownGrace: Duration(time.Second)}
	w, logs := stdioToExit(t, spec)
	for what, text := range map[string]string{"log": logs.String(), "cause": w.cause().Error(), "stdout junk": w.stdoutJunk()} {
		if strings.Contains(text, "tok-SECRET") || !strings.Contains(text, "FAULT_ENV="+plain) {
			t.Errorf("the wire's %s shows the secret or misses the plain value:\n%s", what, tailString(text, 4000))
		}
	}
}

// TestStdioWireMasksJSONStderr: a server that logs JSON on stderr spells a
// secret as a JSON string does, with quotes and backslashes escaped and,
// from some encoders, <, > and & as \u003c, \u003e, \u0026. The wire masks
// those spellings too.
func TestStdioWireMasksJSONStderr(t *testing.T) {
	const quoted, amp = `Sup3r/S3cret+Tok=en"x`, "tok&SECRET<b>"
	script := `printf '%s\n' '{"t": "Sup3r/S3cret+Tok=en\"x"}' '{"u": "tok\u0026SECRET\u003cb\u003e"}' '{"v": "tok&SECRET<b>", "plain": "visible"}' >&2; exit 3`
	spec := &Spec{Command: "/bin/sh", Args: []string{"-c", script},
		Env: map[string]string{"API_TOKEN": quoted, "SESSION_SECRET": amp}, ShutdownGrace: Duration(time.Second)}
	w, logs := stdioToExit(t, spec)
	for what, text := range map[string]string{"log": logs.String(), "cause": w.cause().Error()} {
		if strings.Contains(text, "S3cret") || strings.Contains(text, "SECRET") || !strings.Contains(text, "visible") {
			t.Errorf("the wire's %s shows a secret or misses the plain value:\n%s", what, tailString(text, 4000))
		}
	}
}

// stdioToExit starts spec's server on a stdio wire that logs to the
// returned buffer, and waits for the server to exit and the wire to finish
// reading it.
func stdioToExit(t *testing.T, spec *Spec) (*stdioWire, *testenv.Buffer) {
	t.Helper()
	logs := &testenv.Buffer{}
	w, err := startStdio(spec, slog.New(slog.NewTextHandler(logs, nil)), wireHandlers{
		notification: func(context.Context, string, json.RawMessage) {},
		request: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("none")
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.close() })
	select {
	case <-w.dead():
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not exit")
	}
	<-w.finished
	return w, logs
}
