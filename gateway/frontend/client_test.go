package frontend

import (
	"context"
	"strings"
	"testing"
)

// TestClientOf: one key per client, none for a request without a session,
// never the session id itself, and carried into callbacks' contexts.
func TestClientOf(t *testing.T) {
	bg := context.Background()
	a := withClient(bg, "0b7c0f6e-5b7d-4a53-9f59-6d1f0d7d3a11")
	a2 := withClient(context.WithValue(bg, profileKey{}, "p"), "0b7c0f6e-5b7d-4a53-9f59-6d1f0d7d3a11")
	b := withClient(bg, "1c8d1a7f-6c8e-4b64-8a6a-7e2a1e8e4b22")
	if ClientOf(bg) != "" {
		t.Fatalf("a request without a session has client %q", ClientOf(bg))
	}
	if ka, kb := ClientOf(a), ClientOf(b); ka == "" || ka == kb || ClientOf(a2) != ka {
		t.Fatalf("keys: a %q, a again %q, b %q", ka, ClientOf(a2), kb)
	}
	if k := ClientOf(a); strings.Contains(k, "0b7c0f6e") || strings.Contains("0b7c0f6e-5b7d-4a53-9f59-6d1f0d7d3a11", k[1:]) {
		t.Fatalf("key %q gives the session id away", k)
	}
	if got := ClientOf(WithClientOf(bg, a)); got != ClientOf(a) {
		t.Fatalf("a callback's context has client %q, want %q", got, ClientOf(a))
	}
	if got := ClientOf(WithClientOf(b, bg)); got != ClientOf(b) {
		t.Fatalf("copying no client replaced the context's own: %q", got)
	}
}
