package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImport reads each client's file and checks, in a golden file, the
// servers: block it becomes and the warnings it leaves.
func TestImport(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "import", "*.json"))
	if err != nil || len(files) < 4 {
		t.Fatalf("want 4 fixtures, got %v, %v", files, err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			im, err := Import(f, path)
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			out, err := MarshalServers(im.Servers, im.Order)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			fmt.Fprintf(&b, "# format: %s\n", im.Format)
			for _, w := range im.Warnings {
				fmt.Fprintf(&b, "# warning: %v\n", w)
			}
			b.Write(out)
			golden(t, strings.TrimSuffix(path, ".json")+".golden", b.Bytes())

			// The output parses back to the same servers, apart from names
			// skillgate rejects and variables that must be set.
			lookup := func(string) (string, bool) { return "", true } // every default applies
			cfg, err := Parse(bytes.NewReader(out), "out.yaml", lookup)
			if err != nil && !strings.Contains(err.Error(), "server name") && !strings.Contains(err.Error(), "invalid variable reference") {
				t.Fatalf("Parse(MarshalServers(...)): %v", err)
			}
			if cfg != nil && strings.Join(cfg.ServerOrder, ",") != strings.Join(im.Order, ",") {
				t.Errorf("order %v, want %v", cfg.ServerOrder, im.Order)
			}
		})
	}
}

func TestImportErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"not a client config", `{"foo": 1}`, "c.json: no mcpServers or servers object; expected a Claude Desktop, Claude Code, Cursor or VS Code MCP config"},
		{"array", `[1]`, "c.json: no mcpServers or servers object"},
		{"bad JSON", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n  }\n", "c.json:5:1: invalid JSON: unexpected end of file"},
		{"syntax", "{\n  \"mcpServers\": {\"a\": {\"command\" \"x\"}}}", `c.json:2:`},
		{"wrong type", `{"mcpServers": {"a": {"command": ["x"], "env": {"A": {"b": 1}}}}}`,
			"c.json:1:34: a.command: want a string, got a list\nc.json:1:54: a.env.A: want a string, got a mapping"},
		{"duplicate", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, "c.json:1:40: a: duplicate server name; remove one"},
		{"servers not an object", `{"servers": []}`, "c.json:1:13: servers: want an object of named servers, got a list"},
		{"extra data", `{"servers": {}} {}`, "c.json:1:17: extra data after the top-level object; remove it"},
		{"too deep", `{"servers": {"a": {"args": ` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}}}`, "nested deeper than 200 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import(strings.NewReader(tt.json), "c.json")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Import error = %v\nwant %q", err, tt.want)
			}
		})
	}
	_, err := Import(strings.NewReader(`{}`), "c.json")
	if !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("errors.Is(%v, ErrUnknownFormat) = false", err)
	}
}

// TestImportVariables: ${env:NAME}, which VS Code and Cursor write,
// becomes ${NAME} in every format; editor variables are kept with a warning.
func TestImportVariables(t *testing.T) {
	tests := []struct{ name, json, want, warn string }{
		{"cursor", `{"mcpServers":{"u":{"url":"https://x","headers":{"Authorization":"Bearer ${env:TOK}"}}}}`, "Bearer ${TOK}", ""},
		{"vscode", `{"servers":{"u":{"url":"https://x","headers":{"Authorization":"Bearer ${env:TOK}"}}}}`, "Bearer ${TOK}", ""},
		{"claude code", `{"mcpServers":{"u":{"url":"https://x","headers":{"Authorization":"Bearer ${TOK:-x}"}}}}`, "Bearer ${TOK:-x}", ""},
		{"escaped", `{"mcpServers":{"u":{"url":"https://x","headers":{"Authorization":"$${env:TOK}"}}}}`, "$${env:TOK}", ""},
		{"workspace", `{"mcpServers":{"u":{"url":"https://x","headers":{"Authorization":"${workspaceFolder}"}}}}`, "${workspaceFolder}",
			"c.json:1:66: u.headers.Authorization: editor variable ${workspaceFolder} is kept as is, but skillgate runs outside the editor and would read it as an environment variable; replace it with the path or value it stands for"},
		{"vscode other", `{"servers":{"u":{"url":"https://x","headers":{"Authorization":"${TOK}"}}}}`, "${TOK}",
			"c.json:1:63: u.headers.Authorization: VS Code variable ${TOK} is kept as is and skillgate reads it as an environment variable; replace it with a value or ${VAR}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im, err := Import(strings.NewReader(tt.json), "c.json")
			if err != nil {
				t.Fatal(err)
			}
			if got := im.Servers["u"].Headers["Authorization"]; got != tt.want {
				t.Errorf("Authorization = %q, want %q", got, tt.want)
			}
			var warns []string
			for _, w := range im.Warnings {
				warns = append(warns, w.Error())
			}
			if got := strings.Join(warns, "\n"); got != tt.warn {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, tt.warn)
			}
		})
	}
}

func TestStripJSONC(t *testing.T) {
	in := "{\"a\": \"http://x/*y*/\", // c\n /* b\n */ \"b\": [1, 2,],\n}"
	want := "{\"a\": \"http://x/*y*/\",     \n     \n    \"b\": [1, 2 ] \n}"
	if got := string(stripJSONC([]byte(in))); got != want {
		t.Errorf("stripJSONC = %q\nwant %q", got, want)
	}
}

const mergeBase = `# skillgate config for the team.
listen: {http: 127.0.0.1:8811}

servers:
  # The reference server, for demos.
  everything:
    command: npx # from npm
    args: ["-y", "@modelcontextprotocol/server-everything"]

# Script tools live next to this file.
tools: {dirs: [./tools]}
`

func TestMerge(t *testing.T) {
	add := map[string]*Server{
		"github":     {URL: "https://api.githubcopilot.com/mcp/", Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"}},
		"everything": {Command: "uvx", Args: []string{"everything"}},
		"sqlite":     {Command: "uvx", Args: []string{"mcp-server-sqlite", "--db-path", "test.db"}, Start: "eager"},
	}
	order := []string{"sqlite", "github", "everything"}
	tests := []struct {
		name, base string
		overwrite  bool
		keep       []string // text the result must hold
		err        string
	}{
		{name: "clash", base: mergeBase, err: "6:3: servers.everything: already defined; rename the imported server, or import with --overwrite to replace it"},
		{name: "two documents", base: "servers: {}\n---\nlisten: {http: ':8811'}\n", err: "2:1: a second YAML document; keep one document per file (remove the ---)"},
		{name: "YAML error", base: "servers:\n  a: {command: x\n", err: "2:6: invalid YAML: did not find expected ',' or '}'; this { is not closed"},
		{name: "null document", base: "---\n", keep: []string{"servers:\n  sqlite:\n"}},
		{name: "not UTF-8", base: "listen: {http: \"\xff\"}\n", err: "1:17: byte 0xff is not UTF-8"},
		{name: "overwrite keeps comments", base: mergeBase, overwrite: true, keep: []string{
			"# skillgate config for the team.", "# The reference server, for demos.",
			"# Script tools live next to this file.", "command: uvx", "sqlite:\n    command: uvx", "${GITHUB_TOKEN}",
		}},
		{name: "empty file", base: "", keep: []string{"servers:\n  sqlite:\n"}},
		{name: "no servers key", base: "# just a comment\nlisten: {http: ':8811'}\n", keep: []string{"# just a comment", "servers:\n  sqlite:"}},
		{name: "null servers", base: "servers: # none yet\n", keep: []string{"# none yet", "  github:\n"}},
		{name: "flow servers", base: "servers: {}\n", keep: []string{"servers:\n  sqlite:\n"}},
		{name: "servers is a list", base: "servers: []\n", err: "1:10: servers: not a mapping of server names; fix it before merging"},
		{name: "not YAML", base: "a: [\n", err: "invalid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Merge([]byte(tt.base), "", add, order, tt.overwrite)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Merge error = %v, want %q", err, tt.err)
				}
				// With the file's name, every error names it.
				if _, err := Merge([]byte(tt.base), "skillgate.yaml", add, order, tt.overwrite); err == nil ||
					!strings.HasPrefix(err.Error(), "skillgate.yaml:") || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("merge error = %v, want skillgate.yaml:...%s", err, tt.err)
				}
				if strings.Contains(tt.err, "already defined") && !errors.Is(err, ErrNameClash) {
					t.Errorf("errors.Is(err, ErrNameClash) = false")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.keep {
				if !strings.Contains(string(out), k) {
					t.Errorf("result lacks %q:\n%s", k, out)
				}
			}
			if strings.Contains(string(out), "start: eager") {
				t.Errorf("result spells out the default start:\n%s", out)
			}
			env := func(string) (string, bool) { return "t", true }
			cfg, err := Parse(bytes.NewReader(out), "merged.yaml", env)
			if err != nil {
				t.Fatalf("merged config does not parse: %v\n%s", err, out)
			}
			for _, name := range order {
				want := *add[name]
				want.Start = "eager"
				if name == "github" {
					want.Headers = map[string]string{"Authorization": "Bearer t"}
				}
				if !cfg.Servers[name].Equal(&want) {
					t.Errorf("server %s = %+v, want %+v", name, cfg.Servers[name], want)
				}
			}
		})
	}
}
