package config

import (
	"strings"
	"testing"
)

// TestAdminWrites: admin.writes defaults to trusted, takes trusted, all
// and none, and names the values with file:line for anything else.
func TestAdminWrites(t *testing.T) {
	for _, c := range []struct {
		yaml, want, err string
	}{
		{yaml: "", want: WritesTrusted},
		{yaml: "admin: {}\n", want: WritesTrusted},
		{yaml: "admin: {writes: all}\n", want: WritesAll},
		{yaml: "admin: {writes: none}\n", want: WritesNone},
		{yaml: "admin:\n  writes: everyone\n", err: `x.yaml:2:11: admin.writes: unknown value "everyone"; use trusted, all or none`},
	} {
		cfg, err := Parse(strings.NewReader(c.yaml), "x.yaml", nil)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.yaml, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.yaml, err)
		case c.err == "" && cfg.Admin.Writes != c.want:
			t.Errorf("%q: admin.writes = %q, want %q", c.yaml, cfg.Admin.Writes, c.want)
		}
	}
}

// TestListenWarning: `skillgate validate` warns, at listen.http, of an
// HTTP endpoint beyond loopback without auth.tokens, and says what to do.
func TestListenWarning(t *testing.T) {
	for _, c := range []struct {
		yaml, want string
	}{
		{"listen: {http: \"0.0.0.0:8811\"}\n", "x.yaml:1:16: listen.http: 0.0.0.0:8811 listens beyond loopback and auth.tokens is empty"},
		{"listen: {http: \":8811\"}\n", ":8811 listens beyond loopback"},
		{"listen: {http: \"[::]:8811\"}\n", "[::]:8811 listens beyond loopback"},
		{"listen: {http: \"gateway.example.com:8811\"}\n", "gateway.example.com:8811 listens beyond loopback"},
		{"listen: {http: \"0.0.0.0:8811\"}\nadmin: {writes: all}\n", "with admin.writes: all they may also register tools"},
		{"listen: {http: \"0.0.0.0:8811\"}\nauth: {tokens: [t]}\n", ""},
		{"listen: {http: \"127.0.0.1:8811\"}\n", ""},
		{"listen: {http: \"localhost:8811\"}\n", ""},
		{"listen: {http: \"[::1]:8811\"}\n", ""},
		{"", ""},
	} {
		cfg, err := Parse(strings.NewReader(c.yaml), "x.yaml", nil)
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		var got []string
		for _, w := range cfg.Warnings() {
			if w.Field == "listen.http" {
				got = append(got, w.Error())
			}
		}
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%q: warned %q", c.yaml, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want) || !strings.Contains(got[0], "auth: {tokens:")):
			t.Errorf("%q: warnings %q, want one with %q and what to do", c.yaml, got, c.want)
		}
	}
}
