package config

import (
	"bytes"
	"strings"
	"testing"
)

// TestHeadersRefused checks that header names and values no HTTP request
// can carry, headers the gateway sets itself and names written twice in
// different case are errors at the header's line, and that the headers
// servers commonly need pass.
func TestHeadersRefused(t *testing.T) {
	const good = `servers:
  r:
    url: http://127.0.0.1:9000/mcp
    headers: {Authorization: "Bearer ${TOKEN}", X-Api-Key: k, User-Agent: me, X-Tab: "a	b"}
`
	if _, err := Parse(strings.NewReader(good), "good.yaml", lookupTest); err != nil {
		t.Fatalf("usual headers refused: %v", err)
	}
	const bad = `servers:
  r:
    url: http://127.0.0.1:9000/mcp
    headers:
      authorization: Bearer ${TOKEN}
      X-Secret: "${TOKEN}\n"
      Authorization: Bearer b
      mcp-param-city: x
`
	_, err := Parse(strings.NewReader(bad), "bad.yaml", lookupTest)
	if err == nil {
		t.Fatal("Parse accepted headers that can never be sent")
	}
	for _, want := range []string{
		"bad.yaml:6:7: servers.r.headers.X-Secret: the value holds a line break",
		"bad.yaml:7:7: servers.r.headers.Authorization: Authorization is also written authorization",
		"bad.yaml:8:7: servers.r.headers.mcp-param-city: mcp-param-city is set by the gateway",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), testEnv["TOKEN"]) {
		t.Errorf("a header's value is shown:\n%v", err)
	}
	// A run fails the server with the same errors.
	run, err := ParseForRun(strings.NewReader(bad), "bad.yaml", lookupTest)
	if err != nil || run.Servers["r"].Problem == nil || !strings.Contains(run.Servers["r"].Problem.Error(), "mcp-param-city is set by the gateway") {
		t.Errorf("ParseForRun = %v; want server r failed with its headers' problems", err)
	}
}

// TestURLCredentialsMasked checks that no error shows a password or a
// query value of a URL written in the config.
func TestURLCredentialsMasked(t *testing.T) {
	const cfg = `servers:
  badurl: {url: "htp://x:PWSECRET1@host/mcp?k=QSECRET1"}
  nohost: {url: "https://u:PWSECRET2@/mcp?api_key=QSECRET2"}
skills:
  repos:
    - url: "gopher://bob:PWSECRET3@example.com/skills.git?token=QSECRET3"
`
	_, err := Parse(bytes.NewReader([]byte(cfg)), "c.yaml", nil)
	if err == nil {
		t.Fatal("Parse accepted bad URLs")
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a URL credential is shown:\n%v", err)
	}
	if !strings.Contains(err.Error(), `"htp://x:xxxxx@host/mcp?k=xxxxx" is not an http(s) URL`) {
		t.Errorf("the URL is not shown masked:\n%v", err)
	}
}
