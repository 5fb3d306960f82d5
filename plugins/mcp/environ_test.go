package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// The variables the gateway passes from its environment (Spec.Environ)
// reach the child under the spec's env, which replaces them; the values
// of those named like a credential are masked as env's are.
func TestSpecEnviron(t *testing.T) {
	spec, err := ParseSpec(json.RawMessage(`{"command": "srv", "env": {"KUBECONFIG": "/from/env"},
		"environ": {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIK7MDENG", "AWS_PROFILE": "dev-profile", "KUBECONFIG": "/home/me/.kube/config"}}`))
	if err != nil {
		t.Fatal(err)
	}
	env := childEnv(spec.Environ, spec.Env)
	for k, want := range map[string]string{"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIK7MDENG", "AWS_PROFILE": "dev-profile", "KUBECONFIG": "/from/env"} {
		if got := envValue(env, k); got != want {
			t.Errorf("%s = %q in the child's environment; want %q", k, got, want)
		}
	}
	if got, want := spec.redact("key wJalrXUtnFEMIK7MDENG of dev-profile"), "key xxxxx of dev-profile"; got != want {
		t.Errorf("redact = %q; want %q", got, want)
	}
	_, err = ParseSpec(json.RawMessage(`{"url": "http://127.0.0.1:1/mcp", "environ": {"A": "b"}}`))
	if err == nil || !strings.Contains(err.Error(), "environ") {
		t.Errorf("environ on a url server: %v; want an error naming environ", err)
	}
	if _, err = ParseSpec(json.RawMessage(`{"command": "srv", "environ": {"A=B": "c"}}`)); err == nil || !strings.Contains(err.Error(), `environ name "A=B"`) {
		t.Errorf("environ name with =: %v; want an error naming it", err)
	}
}
