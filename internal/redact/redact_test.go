package redact

import "testing"

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:9000/mcp", "http://127.0.0.1:9000/mcp"},
		{"htp://x:PW@host/mcp?k=Q", "htp://x:xxxxx@host/mcp?k=xxxxx"},
		// A username alone is a token (https://TOKEN@host, a Sentry DSN's key).
		{"https://tok-123456@host/mcp", "https://xxxxx@host/mcp"},
		{"ssh://git@github.com/org/skills", "ssh://git@github.com/org/skills"},
		{"https://bob:@host/mcp", "https://bob:xxxxx@host/mcp"},
		{"http://tok%zz1@host/?k=v", "http://xxxxx@host/?k=xxxxx"},
		{"https://host/mcp?api_key=Q&page=2", "https://host/mcp?api_key=xxxxx&page=xxxxx"},
		{"localhost:9000/mcp", "localhost:9000/mcp"},
		// Not a URL Go parses: masked by its shape.
		{"http://x:PW@host/%zz?k=Q&j=R#f", "http://x:xxxxx@host/%zz?k=xxxxx&j=xxxxx#f"},
		{"https://x:PW@ho st/?a=%zz", "https://x:xxxxx@ho st/?a=xxxxx"},
		{"", ""},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
