package redact

import (
	"slices"
	"strings"
	"testing"
)

func TestSecretsMask(t *testing.T) {
	s := NewSecrets("tok-123456", " tok-123456 ", "true", "", "tok-123456-long", `a"b<c>&d\e`)
	if s.Len() != 3 {
		t.Fatalf("Len = %d, want 3 (short values and duplicates left out)", s.Len())
	}
	for _, tc := range []struct{ in, want string }{
		{"starting with TOKEN=tok-123456-long and tok-123456", "starting with TOKEN=xxxxx and xxxxx"},
		{"true and tok-12345 stay", "true and tok-12345 stay"},
		{`quote a"b<c>&d\e`, "quote xxxxx"},
		{"", ""},
	} {
		if got := s.Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var zero Secrets
	if got := zero.Mask("tok-123456"); got != "tok-123456" {
		t.Errorf("zero Secrets masked: %q", got)
	}
}

func TestSecretsMaskCut(t *testing.T) {
	s := NewSecrets("tok-123456")
	for _, tc := range []struct{ in, want string }{
		{"pad tok-12", "pad xxxxx"},
		{"pad tok-123456 tok-123", "pad xxxxx xxxxx"},
		{"pad to", "pad to"}, // 2 bytes tell nothing
		{"pad tok-123456", "pad xxxxx"},
		{"tok", "xxxxx"},
	} {
		if got := s.MaskCut(tc.in); got != tc.want {
			t.Errorf("MaskCut(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSecretsMaskJSON(t *testing.T) {
	s := NewSecrets(`a"b<c>&d`, "plain-secret")
	for _, tc := range []struct{ in, want string }{
		{`{"m":"x a\"b\u003cc\u003e\u0026d y"}`, `{"m":"x xxxxx y"}`},
		{`{"m":"x a\"b<c>&d y","n":"plain-secret"}`, `{"m":"x xxxxx y","n":"xxxxx"}`},
		{`{"m":1}`, `{"m":1}`},
	} {
		if got := string(s.MaskJSON([]byte(tc.in))); got != tc.want {
			t.Errorf("MaskJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestCredentialName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "API_KEY": true, "SECRET_ENV": true, "DB_PASSWORD": true, "DB_PASS": true,
		"PASS": true, "AUTH_HEADER": true, "AWS_SECRET_ACCESS_KEY": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"SSH_PRIVATE": true, "apiKey": true, "x-api-key": true,
		"GH_PAT_X": true, "GITHUB_PAT": true, "PAT": true, "SENTRY_DSN": true, "DSN": true, "CONNECTION_STRING": true,
		"AZURE_STORAGE_CONNECTION_STRING": true, "DB_CONN_STR": true,
		"PATTERN": false, "SPATIAL": false, "XDG_DATA_DIRS": false, "DSNAME": false, "DATABASE_URL": false,
		"PATH": false, "HOME": false, "LOG_LEVEL": false, "DEBUG": false, "PORT": false, "PASSTHROUGH": false,
		"FAULT_ENV": false, "NODE_ENV": false,
	} {
		if got := CredentialName(name); got != want {
			t.Errorf("CredentialName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestTokenLike(t *testing.T) {
	for v, want := range map[string]bool{
		"ghp_" + strings.Repeat("a1", 18): true, "github_pat_11ABCDEFG0123456789_abcdefghijklmnop": true,
		"sk-proj-abcdefghijklmnop0123": true, "sk_live_abcdefghijklmnop01": true, "xoxb-1234567890-abcdef": true,
		"AKIAIOSFODNN7EXAMPLE": true, "glpat-abcdefghijklmnopqrst": true,
		"Zx9mQ2vL8pR4tY7wK3nB6cF1": true, "3f9a1c7e2b8d4f60a5e1c9b7d3f2a8e4": true, "MyProject2024Release": false, // high entropy
		"/home/user/projects/myproject": false, "node_modules_cache_version": false, "https://api.example.com/v1": false,
		"--api-key": false, "true": false, "sk-short": false, "AKIAlowercase0000000": false, "": false,
		"com.example.application": false, "ThisIsAnOrdinarySentence": false,
	} {
		if got := TokenLike(v); got != want {
			t.Errorf("TokenLike(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestURLSecrets(t *testing.T) {
	for in, want := range map[string][]string{
		"postgres://app:pw-SECRET@db:5432/app":    {"pw-SECRET"},
		"https://PUBKEY123@o1.ingest.sentry.io/4": {"PUBKEY123"},
		"https://host/mcp?k=v":                    nil,
		"/plain/path":                             nil,
		"not a url":                               nil,
	} {
		if got := URLSecrets(in); !slices.Equal(got, want) {
			t.Errorf("URLSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEmbeddedSecrets(t *testing.T) {
	for in, want := range map[string][]string{
		"Server=db;User Id=app;Password=conn-pw;": {"conn-pw"},
		"AccountName=a;AccountKey=k3y-value":      {"k3y-value"},
		"postgres://app:pw-SECRET@db/app":         {"pw-SECRET"},
		"a;b=c":                                   nil,
	} {
		if got := EmbeddedSecrets(in); !slices.Equal(got, want) {
			t.Errorf("EmbeddedSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}
