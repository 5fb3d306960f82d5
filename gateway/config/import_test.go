package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	// A project's files, read with their path: the project folder shows
	// as $PROJECT.
	project, err := filepath.Abs(filepath.Join("testdata", "import", "project"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("testdata", "import", "project", ".mcp.json"),
		filepath.Join("testdata", "import", "project", ".vscode", "mcp.json"))
	for _, path := range files {
		t.Run(strings.TrimPrefix(path, filepath.Join("testdata", "import")+string(filepath.Separator)), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			opts := ImportOptions{}
			if strings.Contains(path, "project") {
				opts.Path = path
			}
			im, err := ImportWith(f, path, opts)
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
			for _, n := range im.Notes {
				fmt.Fprintf(&b, "# note: %s\n", n)
			}
			b.Write(out)
			golden(t, strings.TrimSuffix(path, ".json")+".golden", bytes.ReplaceAll(b.Bytes(), []byte(project), []byte("$PROJECT")))

			// The output parses back to the same servers, in order, with
			// no problem but variables that must be set.
			cfg := parseImported(t, out)
			if cfg != nil && strings.Join(cfg.ServerOrder, ",") != strings.Join(im.Order, ",") {
				t.Errorf("order %v, want %v", cfg.ServerOrder, im.Order)
			}
			for name, old := range im.Renamed {
				if im.Servers[name] == nil || !acceptedName(name) || acceptedName(old) {
					t.Errorf("Renamed[%q] = %q, for a server not imported or not renamed", name, old)
				}
			}
		})
	}
}

// parseImported parses what Import and MarshalServers made of a client's
// file with no variable set, and fails t unless every problem is a
// variable that must be set; it returns the config when there are none.
func parseImported(t testing.TB, out []byte) *Config {
	t.Helper()
	cfg, err := Parse(bytes.NewReader(out), "out.yaml", nil)
	if err == nil {
		return cfg
	}
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *Error
		if !errors.As(e, &ce) || !(errors.Is(ce, ErrUndefinedVariable) || strings.HasPrefix(ce.Msg, "empty after expanding")) {
			t.Fatalf("the imported servers do not validate: %v\n%s", e, out)
		}
	}
	return nil
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
		// What the config would refuse in an entry, and only the user
		// can put right, is an error naming the entry.
		{"command and url", `{"mcpServers": {"a": {"command": "x", "url": "https://x/mcp"}}}`,
			"c.json:1:17: a: both command and url are set; keep command for a stdio server or url for a remote one, then import again"},
		{"option as command", `{"mcpServers": {"a": {"command": "-y", "args": ["pkg"]}}}`,
			`c.json:1:34: a.command: "-y" looks like an option, not a program; name the program to run, then import again`},
		{"sse with command", `{"mcpServers": {"a": {"type": "sse", "command": "x"}}}`,
			"c.json:1:31: a.type: type sse needs a url, but this server has a command; set url, or drop type to run the command over stdio, then import again"},
		{"not an http URL", `{"mcpServers": {"a": {"url": "ftp://x/mcp"}}}`,
			`c.json:1:30: a.url: "ftp://x/mcp" is not an http(s) URL; write it as http://host:port/path, then import again`},
		{"default not a URL", `{"mcpServers": {"a": {"url": "${U:-localhost}"}}}`, `a.url: "localhost" is not an http(s) URL`},
		{"env name", `{"mcpServers": {"a": {"command": "x", "env": {"A=B": "1"}}}}`,
			`c.json:1:46: a.env: "A=B" is not a variable name; fix it, then import again`},
		{"empty env name", `{"mcpServers": {"a": {"command": "x", "env": {"": "1"}}}}`, `a.env: "" is not a variable name`},
		{"number as command", `{"mcpServers": {"a": {"command": 5}}}`,
			"c.json:1:34: a.command: want a string, got int 5; write it in quotes if it is meant, then import again"},
		{"bool as url", `{"mcpServers": {"a": {"url": true}}}`, "a.url: want a string, got bool true"},
		{"editor command", `{"servers": {"a": {"command": "x", "args": ["${command:pickFile}"]}}}`,
			"c.json:1:45: a.args[0]: editor variable ${command:pickFile} has no value outside the editor; replace it with the value it stands for, then import again"},
		{"editor setting", `{"mcpServers": {"a": {"command": "x", "env": {"P": "${config:python.path}"}}}}`, "a.env.P: editor variable ${config:python.path} has no value"},
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
		{"path separator", `{"servers":{"u":{"url":"https://x","headers":{"Authorization":"a${/}b${pathSeparator}c"}}}}`, "a/b/c",
			`c.json:1:47: u.headers.Authorization: holds a literal secret (Authorization: "xxxxx"); move it into a variable: write "${U_TOKEN}" and set U_TOKEN where the gateway runs`},
		{"vscode other", `{"servers":{"u":{"url":"https://x","headers":{"Authorization":"${TOK}"}}}}`, "${TOK}",
			"c.json:1:63: u.headers.Authorization: VS Code variable ${TOK} is kept as is and skillgate reads it as an environment variable; replace it with a value or ${VAR}"},
		{"vscode input", `{"servers":{"u":{"url":"https://x","headers":{"Authorization":"Bearer ${input:api-key}"}}}}`, "Bearer ${API_KEY}",
			"c.json:1:63: u.headers.Authorization: VS Code input ${input:api-key} became ${API_KEY}, since skillgate cannot prompt for it; set API_KEY where the gateway runs, or write the value"},
		{"vscode input with a default", `{"inputs":[{"type":"pickString","id":"region","options":["eu","us"],"default":"eu"}],` +
			`"servers":{"u":{"url":"https://x","headers":{"Authorization":"${input:region}"}}}}`, "${REGION:-eu}",
			"c.json:1:147: u.headers.Authorization: VS Code input ${input:region} became ${REGION:-eu}, its default, since skillgate cannot prompt for it; set REGION where the gateway runs for another value"},
		{"skipped server's references", `{"mcpServers":{"u":{"url":"https://x","headers":{"Authorization":"${TOK}"}},"w":{"type":"ws","url":"${config:x}"}}}`, "${TOK}",
			`c.json:1:89: w.type: unknown type "ws"; skillgate connects over stdio, http and sse only, so this server is not imported`},
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

func TestImportVariableNames(t *testing.T) {
	for in, want := range map[string]string{"perplexity-key": "PERPLEXITY_KEY", "token": "TOKEN", "2fa": "INPUT_2FA", "": "INPUT_", "a.b c": "A_B_C"} {
		if got := inputVar(in); got != want || !validVarName(got) {
			t.Errorf("inputVar(%q) = %q, want %q", in, got, want)
		}
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
		{name: "clash", base: mergeBase, err: "6:3: servers.everything: already defined, otherwise than the imported server; nothing was merged: " +
			"keep this one with --skip-existing, replace it with --overwrite, or rename it here and import again"},
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

const mergeSameBase = `servers:
  # kept
  fs: {command: "${NODE_BIN:-node}", args: ["${SF_PATH}"], env: {LEVEL: "${LEVEL:-info}"}}
  db: {command: uvx, args: [db]}
  web: {url: "https://a/mcp"}
`

// TestMergeSame checks that a server the config already has, with the same
// definition, is left as it is and does not stop the others from being
// merged, while each server defined otherwise is a conflict that merges
// nothing.
func TestMergeSame(t *testing.T) {
	base := mergeSameBase
	add := map[string]*Server{
		"fs":     {Command: "${NODE_BIN:-node}", Args: []string{"${SF_PATH}"}, Env: map[string]string{"LEVEL": "${LEVEL:-info}"}, Start: "eager"},
		"newone": {Command: "node", Args: []string{"n.js"}},
	}
	order := []string{"fs", "newone"}
	out, err := Merge([]byte(base), "skillgate.yaml", add, order, false)
	if err != nil {
		t.Fatalf("Merge of a server already there as it is: %v", err)
	}
	if !strings.Contains(string(out), "# kept\n  fs: {command: \"${NODE_BIN:-node}\"") || !strings.Contains(string(out), "newone:\n    command: node") {
		t.Errorf("fs is not left as it is, or newone is not merged:\n%s", out)
	}

	add["db"] = &Server{Command: "uvx", Args: []string{"db2"}}
	add["web"] = &Server{URL: "https://b/mcp"}
	order = append(order, "db", "web")
	_, err = Merge([]byte(base), "skillgate.yaml", add, order, false)
	for _, want := range []string{"skillgate.yaml:4:3: servers.db: already defined, otherwise", "skillgate.yaml:5:3: servers.web: already defined, otherwise"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Merge error = %v, want %q", err, want)
		}
	}
}

// TestMergeModes checks that MergeSkip keeps the servers the config defines
// otherwise and MergeOverwrite replaces them, both merging the rest.
func TestMergeModes(t *testing.T) {
	add := map[string]*Server{
		"fs":     {Command: "${NODE_BIN:-node}", Args: []string{"${SF_PATH}"}, Env: map[string]string{"LEVEL": "${LEVEL:-info}"}},
		"newone": {Command: "node", Args: []string{"n.js"}},
		"db":     {Command: "uvx", Args: []string{"db2"}},
		"web":    {URL: "https://b/mcp"},
	}
	order := []string{"fs", "newone", "db", "web"}
	for mode, want := range map[MergeMode]MergeResult{
		MergeSkip:      {Added: []string{"newone"}, Same: []string{"fs"}, Skipped: []string{"db", "web"}},
		MergeOverwrite: {Added: []string{"newone"}, Same: []string{"fs"}, Replaced: []string{"db", "web"}},
	} {
		res, err := MergeServers([]byte(mergeSameBase), "skillgate.yaml", add, order, mode)
		if err != nil {
			t.Fatalf("mode %d: %v", mode, err)
		}
		got := *res
		got.Out = nil
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("mode %d: %+v, want %+v", mode, got, want)
		}
		if db := strings.Contains(string(res.Out), "args: [db2]"); db != (mode == MergeOverwrite) {
			t.Errorf("mode %d: db replaced = %v:\n%s", mode, db, res.Out)
		}
	}
}

// TestImportClaudeProjects checks that the servers of the projects in
// Claude Code's ~/.claude.json are imported with the user's, each run in
// its project's folder, under names that stay unique.
func TestImportClaudeProjects(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "import", "claude_user.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := Import(f, "claude.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(im.Order, ","), "userfs,db,projdb,db-app,db-site,docs"; got != want {
		t.Fatalf("servers %s, want %s", got, want)
	}
	for name, cwd := range map[string]string{"userfs": "", "db": "", "projdb": "/home/me/app", "db-app": "/home/me/app", "db-site": "/home/me/site", "docs": ""} {
		if got := im.Servers[name].Cwd; got != cwd {
			t.Errorf("%s: cwd %q, want %q", name, got, cwd)
		}
	}
	if im.Servers["db-app"].Command != "./bin/db" || im.Servers["db-site"].Command != "node" {
		t.Errorf("db-app or db-site is not the right project's: %+v, %+v", im.Servers["db-app"], im.Servers["db-site"])
	}
}

// TestImportProjectOption checks that --project picks one project of
// ~/.claude.json, and names the projects there are when it has no such one.
func TestImportProjectOption(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "import", "claude_user.json"))
	if err != nil {
		t.Fatal(err)
	}
	im, err := ImportWith(bytes.NewReader(data), "claude.json", ImportOptions{Project: "/home/me/site/"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(im.Order, ","), "userfs,db,db-site,docs"; got != want {
		t.Errorf("servers %s, want %s", got, want)
	}
	_, err = ImportWith(bytes.NewReader(data), "claude.json", ImportOptions{Project: "/home/me/empty"})
	if want := "claude.json: no project /home/me/empty with servers; those with servers are: /home/me/app, /home/me/site"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestImportEditorVariableOnce checks that an editor variable import
// keeps, and warns about, is not reported again as unset by Check.
func TestImportEditorVariableOnce(t *testing.T) {
	im, err := Import(strings.NewReader(`{"servers": {"fs": {"command": "node", "args": ["${workspaceFolder}/srv.js", "${ROOT}"]}}}`), "mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalServers(im.Servers, im.Order)
	if err != nil {
		t.Fatal(err)
	}
	err = im.Check(out, "out.yaml", func(string) (string, bool) { return "", false })
	if err == nil || strings.Contains(err.Error(), "workspaceFolder") || !strings.Contains(err.Error(), "${ROOT}") {
		t.Errorf("Check = %v, want ${ROOT} unset and nothing about ${workspaceFolder}, warned about already", err)
	}
}

// TestImportBadReferences checks that a ${...} skillgate cannot expand
// does not stop the import: it is written as $${...}, which skillgate
// passes on as it is, with a warning that says so.
func TestImportBadReferences(t *testing.T) {
	tests := []struct{ name, arg, want, warn string }{
		{"dotted", "https://x/${host.name}/mcp", "https://x/$${host.name}/mcp",
			"c.json:1:48: a.args[0]: skillgate cannot expand ${host.name} (it expands ${NAME} and ${NAME:-default}, NAME letters, digits and _), " +
				"so it is written as $${host.name} in the skillgate config, and the server gets it as it is; if it stands for a value, write that value or a ${NAME} there instead"},
		{"empty", "a${}b", "a$${}b", "a.args[0]: skillgate cannot expand ${} ("},
		{"unterminated", "${A", "$${A", "a.args[0]: skillgate cannot expand ${A ("},
		{"inside a default", "${A:-${b.c}}", "${A:-$${b.c}}", "a.args[0]: skillgate cannot expand ${b.c} ("},
		{"good ones stay", "${A}-${B:-x}-$${C}", "${A}-${B:-x}-$${C}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arg, _ := json.Marshal(tt.arg)
			im, err := Import(strings.NewReader(`{"mcpServers": {"a": {"command": "x", "args": [`+string(arg)+`]}}}`), "c.json")
			if err != nil {
				t.Fatal(err)
			}
			if got := im.Servers["a"].Args[0]; got != tt.want {
				t.Errorf("args[0] = %q, want %q", got, tt.want)
			}
			var warns []string
			for _, w := range im.Warnings {
				warns = append(warns, w.Error())
			}
			if got := strings.Join(warns, "\n"); (tt.warn == "") != (got == "") || !strings.Contains(got, tt.warn) {
				t.Errorf("warnings:\n%s\nwant %q", got, tt.warn)
			}
			out, err := MarshalServers(im.Servers, im.Order)
			if err != nil {
				t.Fatal(err)
			}
			parseImported(t, out)
		})
	}
}

// TestImportClientKeys checks the keys some clients write that skillgate
// reads otherwise or not at all: a type that the rest of the entry
// contradicts, transport for type, an OAuth client's auth.
func TestImportClientKeys(t *testing.T) {
	tests := []struct{ name, entry, want, warn string }{
		{"stdio with a url", `{"type": "stdio", "url": "https://x/mcp"}`, "url: https://x/mcp\n",
			"c.json:1:31: a.type: type stdio, but only url is set: imported as a remote server at its url (streamable HTTP, falling back to SSE); check that this is the server meant"},
		{"http with a command", `{"type": "http", "command": "srv"}`, "command: srv\n",
			"c.json:1:31: a.type: type http, but only command is set: imported as a stdio server that runs the command; check that this is the server meant"},
		{"transport sse", `{"transport": "sse", "url": "https://x/sse"}`, "url: https://x/sse\ntransport: sse\n", ""},
		{"transport streamable-http", `{"transport": "streamable-http", "url": "https://x/mcp"}`, "url: https://x/mcp\n", ""},
		{"transport unknown", `{"transport": "ws", "url": "wss://x/mcp"}`, "",
			`c.json:1:36: a.transport: unknown transport "ws"; skillgate connects over stdio, http and sse only, so this server is not imported`},
		{"cursor auth", `{"url": "https://oauth.example.com/mcp", "auth": {"CLIENT_ID": "abc", "CLIENT_SECRET": "sec", "scopes": ["read"]}}`,
			"url: https://oauth.example.com/mcp\n",
			`c.json:1:71: a.auth: not imported: skillgate cannot sign in to a server with OAuth; get a token for it and send it in a header: ` +
				`headers: {Authorization: "Bearer ${A_TOKEN}"}, setting A_TOKEN where the gateway runs`},
		{"oauth", `{"url": "https://x/mcp", "oauth": {"clientId": "abc"}}`, "url: https://x/mcp\n", "a.oauth: not imported: skillgate cannot sign in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im, err := Import(strings.NewReader(`{"mcpServers": {"a": `+tt.entry+`}}`), "c.json")
			if err != nil {
				t.Fatal(err)
			}
			out, err := MarshalServers(im.Servers, im.Order)
			if err != nil {
				t.Fatal(err)
			}
			want := "servers: {}\n"
			if tt.want != "" {
				want = "servers:\n  a:\n    " + strings.ReplaceAll(strings.TrimSuffix(tt.want, "\n"), "\n", "\n    ") + "\n"
			}
			if string(out) != want {
				t.Errorf("imported:\n%s\nwant:\n%s", out, want)
			}
			var warns []string
			for _, w := range im.Warnings {
				warns = append(warns, w.Error())
			}
			if got := strings.Join(warns, "\n"); (tt.warn == "") != (got == "") || !strings.Contains(got, tt.warn) {
				t.Errorf("warnings:\n%s\nwant %q", got, tt.warn)
			}
			parseImported(t, out)
		})
	}
}

// The JSON reader finds each token's line and column from where the last
// one was, not from the file's start: over a file with many servers the
// bytes it reads for positions stay a small multiple of the file's size
// (they grew with its square: 20,000 servers took 18 s, 216 MB minutes).
func TestParseJSONPositionsLinear(t *testing.T) {
	for _, n := range []int{10, 2000} {
		var b strings.Builder
		b.WriteString("{\n  \"mcpServers\": {\n")
		for i := range n {
			if i > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, "    \"s%d\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"pkg-%d\"],\n      \"env\": {\"A\": \"b\"}\n    }", i, i)
		}
		b.WriteString("\n  }\n}\n")
		data := []byte(b.String())
		p := &jsonParser{data: data, name: "big.json", dec: json.NewDecoder(bytes.NewReader(data))}
		root, err := p.value(0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(root.Content[1].Content); got != 2*n {
			t.Fatalf("%d servers read as %d nodes", n, got)
		}
		last := root.Content[1].Content[2*n-1]
		if wantLine := 2 + 5*(n-1) + 1; last.Line != wantLine || last.Column != 10+len(fmt.Sprint(n-1)) {
			t.Errorf("last server at %d:%d, want %d:%d", last.Line, last.Column, wantLine, 10+len(fmt.Sprint(n-1)))
		}
		if p.scanned > 2*int64(len(data)) {
			t.Errorf("%d servers: positions read %d bytes of a %d-byte file; want at most twice its size", n, p.scanned, len(data))
		}
	}
}

// BenchmarkImportServers imports Claude Desktop files of 1,000 and 10,000
// servers: the time per server should stay about the same.
func BenchmarkImportServers(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		var sb strings.Builder
		sb.WriteString(`{"mcpServers": {`)
		for i := range n {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, "\n  \"s%d\": {\"command\": \"npx\", \"args\": [\"-y\", \"pkg-%d\"], \"env\": {\"LOG_LEVEL\": \"info\"}}", i, i)
		}
		sb.WriteString("\n}}\n")
		data := sb.String()
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Import(strings.NewReader(data), "big.json"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/server")
		})
	}
}

// A project folder is copied as a path, never as variable references: a
// $ in it (a folder named /tmp/${SKILLGATE_TOKEN}) is escaped in the cwd
// it gives and in what ${workspaceFolder} became, so the config does not
// expand the gateway's variables there; project keys that are relative
// or climb with .. are warned about.
func TestImportProjectPathsEscaped(t *testing.T) {
	const file = `{"projects": {
  "/tmp/${SKILLGATE_TOKEN}": {"mcpServers": {"p3": {"command": "node", "args": ["${workspaceFolder}/s.js", "${workspaceFolderBasename}"]}}},
  "/tmp/cost$5": {"mcpServers": {"p4": {"command": "node", "cwd": "sub"}}},
  "relative/dir": {"mcpServers": {"p2": {"command": "./x"}}},
  "/home/u/../../etc": {"mcpServers": {"p1": {"command": "ls"}}}
}}`
	im, err := Import(strings.NewReader(file), "claude.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalServers(im.Servers, im.Order)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(bytes.NewReader(out), "/cfg/skillgate.yaml", func(k string) (string, bool) {
		return "gateway-secret", k == "SKILLGATE_TOKEN"
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(fmt.Sprint(cfg.Servers["p3"]), "gateway-secret") {
		t.Errorf("the imported config expands a variable from the project's path:\n%s", out)
	}
	p3 := cfg.Servers["p3"]
	if want := []string{"/tmp/${SKILLGATE_TOKEN}/s.js", "${SKILLGATE_TOKEN}"}; p3.Cwd != "/tmp/${SKILLGATE_TOKEN}" || !slices.Equal(p3.Args, want) {
		t.Errorf("p3: cwd %q, args %q; want cwd /tmp/${SKILLGATE_TOKEN}, args %q", p3.Cwd, p3.Args, want)
	}
	if got := cfg.Servers["p4"].Cwd; got != "/tmp/cost$5/sub" {
		t.Errorf("p4: cwd %q, want /tmp/cost$5/sub", got)
	}
	var warns []string
	for _, w := range im.Warnings {
		warns = append(warns, w.Error())
	}
	all := strings.Join(warns, "\n")
	for _, dir := range []string{`"relative/dir"`, `"/home/u/../../etc"`} {
		if !strings.Contains(all, dir) {
			t.Errorf("no warning about the project key %s; warnings:\n%s", dir, all)
		}
	}
	if strings.Contains(all, `"/tmp/cost$5"`) {
		t.Errorf("a warning about an absolute project key:\n%s", all)
	}
}
