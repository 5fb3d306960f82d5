package config

import (
	"strings"
	"testing"
)

const secretsJSON = `{
  "mcpServers": {
    "remote": {
      "url": "https://api.example.com/mcp?key=QUERYSECRET&page=2",
      "headers": {"Authorization": "Bearer LITERALSECRET", "X-Trace": "on"}
    },
    "tok": {
      "url": "https://api.example.com/mcp",
      "headers": {"Authorization": "Bearer ${UNSET_IMPORT_TOKEN}"}
    },
    "local": {
      "command": "srv",
      "env": {"OPENAI_API_KEY": "sk-ENVSECRET", "GITHUB_TOKEN": "${GITHUB_TOKEN}", "DEBUG": "1"}
    }
  }
}`

// TestImportLiteralSecrets checks that each credential an entry writes in
// clear gets a warning naming where it is, with the value masked, and
// that credentials already in ${VAR}s get none.
func TestImportLiteralSecrets(t *testing.T) {
	im, err := Import(strings.NewReader(secretsJSON), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range im.Warnings {
		got = append(got, w.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`c.json:4:14: remote.url: holds the query value key in clear (https://api.example.com/mcp?key=xxxxx&page=xxxxx); move it into a variable (${REMOTE_KEY})`,
		`c.json:5:19: remote.headers.Authorization: holds a literal secret (Authorization: "Bearer xxxxx"); move it into a variable: write "Bearer ${REMOTE_TOKEN}"`,
		`c.json:13:15: local.env.OPENAI_API_KEY: holds a literal secret (OPENAI_API_KEY: xxxxx); move it into a variable: write OPENAI_API_KEY: ${OPENAI_API_KEY}`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	if len(got) != 3 {
		t.Errorf("want 3 warnings, got %d:\n%s", len(got), all)
	}
	if strings.Contains(all, "QUERYSECRET") || strings.Contains(all, "LITERALSECRET") || strings.Contains(all, "ENVSECRET") {
		t.Errorf("a secret is shown:\n%s", all)
	}
}

// TestImportBadHeaders checks that a header the config would refuse stops
// the import with an error at its line.
func TestImportBadHeaders(t *testing.T) {
	const in = `{"mcpServers": {"r": {"url": "http://h/mcp",
  "headers": {"Bad Key": "x", "Accept": "*/*"}}}}`
	_, err := Import(strings.NewReader(in), "c.json")
	if err == nil {
		t.Fatal("Import accepted headers the config refuses")
	}
	for _, want := range []string{`c.json:2:15: r.headers.Bad Key: "Bad Key" is not a header name`, `c.json:2:31: r.headers.Accept: Accept is a header the gateway sets itself`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
}

// TestImportCheckCitesFile checks that the problems left in the imported
// servers cite the imported file, not the YAML made of it.
func TestImportCheckCitesFile(t *testing.T) {
	im, err := Import(strings.NewReader(secretsJSON), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalServers(im.Servers, im.Order)
	if err != nil {
		t.Fatal(err)
	}
	err = im.Check(out, "the imported servers", nil)
	if err == nil {
		t.Fatal("no problem, want the unset variables")
	}
	msg := err.Error()
	for _, want := range []string{"c.json:9:19: servers.tok.headers.Authorization: ", "c.json:13:49: servers.local.env.GITHUB_TOKEN: "} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "the imported servers") {
		t.Errorf("a problem cites the generated YAML:\n%s", msg)
	}
}

// TestImportSecretsInArgs checks that a password in a URL (in env or
// args), the value of a --token or --api-key option and a token of a
// well-known shape get a warning saying what to write instead, the value
// masked, and that ${VAR}s and ordinary values get none.
func TestImportSecretsInArgs(t *testing.T) {
	const in = `{"mcpServers": {
 "b": {"command":"npx","args":["-y","some-db-mcp","postgresql://admin:Sup3rS3cret@db.internal:5432/prod", "--token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "--api-key=KEYSECRET", "sk-ant-api03-abcdefghijklmnop", "--password", "${DB_PASS}", "--port", "5432", "https://u:${PW}@h/x"],
  "env":{"DATABASE_URL":"postgres://u:p4ssw0rd@localhost/db","SLACK":"xoxb-1234567890-abcdef","DEBUG":"true","HOME_URL":"https://example.com/a:b@c"}}
}}`
	im, err := Import(strings.NewReader(in), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range im.Warnings {
		got = append(got, w.Error())
	}
	want := []string{
		`c.json:2:51: b.args[2]: holds a password in clear (postgresql://admin:xxxxx@db.internal:5432/prod); move it into a variable: write "postgresql://admin:${B_PASSWORD}@db.internal:5432/prod" and set B_PASSWORD where the gateway runs`,
		`c.json:2:118: b.args[4]: holds a literal secret (--token xxxxx); move it into a variable: write "${B_TOKEN}" and set B_TOKEN where the gateway runs`,
		`c.json:2:162: b.args[5]: holds a literal secret (--api-key=xxxxx); move it into a variable: write "--api-key=${B_API_KEY}" and set B_API_KEY where the gateway runs`,
		`c.json:2:185: b.args[6]: holds a literal secret (xxxxx); move it into a variable: write "${B_TOKEN}" and set B_TOKEN where the gateway runs`,
		`c.json:3:10: b.env.DATABASE_URL: holds a password in clear (DATABASE_URL: postgres://u:xxxxx@localhost/db); move it into a variable: write DATABASE_URL: ${DATABASE_URL} and set DATABASE_URL where the gateway runs`,
		`c.json:3:62: b.env.SLACK: holds a literal secret (SLACK: xxxxx); move it into a variable: write SLACK: ${SLACK} and set SLACK where the gateway runs`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, secret := range []string{"Sup3rS3cret", "ghp_abc", "KEYSECRET", "sk-ant", "p4ssw0rd", "xoxb-"} {
		if strings.Contains(strings.Join(got, "\n"), secret) {
			t.Errorf("a warning shows %s", secret)
		}
	}
}

// A key in a URL's username (https://KEY@host, as some services hand out)
// is a literal secret too; a short user name such as git is none.
func TestImportLiteralSecretInUsername(t *testing.T) {
	im, err := Import(strings.NewReader(`{"mcpServers": {
  "zap": {"url": "https://tok-abcdef123456@mcp.example.com/mcp"},
  "git": {"url": "https://git@mcp.example.com/mcp"}
}}`), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range im.Warnings {
		got = append(got, w.Error())
	}
	all := strings.Join(got, "\n")
	if want := `c.json:2:18: zap.url: holds a key in its user name in clear (https://xxxxx@mcp.example.com/mcp); move it into a variable (${ZAP_TOKEN})`; !strings.Contains(all, want) {
		t.Errorf("warnings:\n%s\nwant %s", all, want)
	}
	if strings.Contains(all, "git.url") || strings.Contains(all, "tok-abcdef") {
		t.Errorf("warnings:\n%s\nwant none about git.url, and the key masked", all)
	}
}
