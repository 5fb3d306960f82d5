package redact

import "testing"

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
		"PATH": false, "HOME": false, "LOG_LEVEL": false, "DEBUG": false, "PORT": false, "PASSTHROUGH": false,
		"FAULT_ENV": false, "NODE_ENV": false,
	} {
		if got := CredentialName(name); got != want {
			t.Errorf("CredentialName(%q) = %v, want %v", name, got, want)
		}
	}
}
