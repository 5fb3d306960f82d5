package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// brokenConfig has a problem in a server entry, and an inline pipeline
// with one of its own that does not depend on it.
const brokenConfig = `servers:
  everything:
    command: echo
    timout: 3s
pipelines:
  inline:
    p1:
      steps:
        - {id: a, tool: everything__echo, with: {message: "${{ inputs.x + }}"}}
`

// validate reports the problems of the pipelines along with those of the
// config, when the config's problems are elsewhere: every problem at once.
func TestValidateConfigAndPipelineProblems(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"skillgate.yaml": brokenConfig})
	cfg := filepath.Join(dir, "skillgate.yaml")
	_, stderr, err := runCLI(t, "validate", cfg)
	var code exitError
	if !errors.As(err, &code) || code != 1 {
		t.Fatalf("validate: %v, want exit 1\n%s", err, stderr)
	}
	for _, want := range []string{
		cfg + ":4:5: servers.everything.timout: unknown key",
		cfg + ":9:73: p1.steps[0].with.message: unexpected token EOF in ${{ inputs.x + }}",
		"in its pipelines",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate lacks %q:\n%s", want, stderr)
		}
	}
	// A problem in pipelines: itself leaves them unchecked, and says so.
	writeFiles(t, dir, map[string]string{"skillgate.yaml": strings.Replace(brokenConfig, "  inline:", "  dirz: [x]\n  inline:", 1)})
	_, stderr, _ = runCLI(t, "validate", cfg)
	if !strings.Contains(stderr, "pipelines.dirz: unknown key") || !strings.Contains(stderr, "pipelines are not checked") {
		t.Errorf("validate with a problem in pipelines:\n%s", stderr)
	}
}

// validateJSON is what validate --json prints.
type validateJSON struct {
	OK       bool `json:"ok"`
	Problems []struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
		Field    string `json:"field"`
		Message  string `json:"message"`
		Severity string `json:"severity"`
		Source   string `json:"source"`
	} `json:"problems"`
}

// validate --json prints every problem with its place, severity and
// source on stdout, nothing on stderr, and exits as without it.
func TestValidateJSON(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"bad.yaml":  brokenConfig + "tools: {dirs: [./nada]}\n",
		"good.yaml": "servers: {a: {command: echo}}\n",
	})
	bad := filepath.Join(dir, "bad.yaml")
	out, stderr, err := runCLI(t, "validate", "--json", bad)
	var code exitError
	if !errors.As(err, &code) || code != 1 || stderr != "" {
		t.Fatalf("validate --json: %v, stderr %q; want exit 1 and no stderr", err, stderr)
	}
	var got validateJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if got.OK {
		t.Error("ok is true for a config with problems")
	}
	sources := map[string]bool{}
	for _, p := range got.Problems {
		sources[p.Source+"/"+p.Severity] = true
		if p.File == "" || p.Line == 0 || p.Message == "" {
			t.Errorf("a problem without its place or message: %+v", p)
		}
		if p.Source == "config" && p.Severity == "error" && (p.File != bad || p.Line != 4 || p.Column != 5 || p.Field != "servers.everything.timout") {
			t.Errorf("config problem %+v", p)
		}
	}
	for _, want := range []string{"config/error", "config/warning", "pipeline/error"} {
		if !sources[want] {
			t.Errorf("no %s problem in:\n%s", want, out)
		}
	}
	out, stderr, err = runCLI(t, "validate", "--json", filepath.Join(dir, "good.yaml"))
	if err != nil || stderr != "" || json.Unmarshal([]byte(out), &got) != nil || !got.OK || len(got.Problems) != 0 || !strings.Contains(out, `"problems": []`) {
		t.Errorf("validate --json of a good config: %v, %q:\n%s", err, stderr, out)
	}
}

// A tools, pipelines, skills or plugins folder that is not there is a
// warning at its line in the config, with the path looked for, not a
// problem of the pipelines or skills without a line.
func TestValidateMissingDirs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"skillgate.yaml": `servers: {a: {command: echo}}
pipelines: {dirs: [./nope]}
tools: {dirs: [./nada]}
skills: {dirs: [./nskills]}
plugins: {dirs: [./nplugins]}
`})
	cfg := filepath.Join(dir, "skillgate.yaml")
	_, stderr, err := runCLI(t, "validate", cfg)
	if err != nil {
		t.Errorf("validate: %v, want exit 0", err)
	}
	for _, want := range []string{
		"warning: " + cfg + ":2:20: pipelines.dirs[0]: " + filepath.Join(dir, "nope") + " does not exist",
		"warning: " + cfg + ":3:16: tools.dirs[0]: " + filepath.Join(dir, "nada") + " does not exist",
		"warning: " + cfg + ":4:17: skills.dirs[0]: " + filepath.Join(dir, "nskills") + " does not exist",
		"warning: " + cfg + ":5:18: plugins.dirs[0]: " + filepath.Join(dir, "nplugins") + " does not exist",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate lacks %q:\n%s", want, stderr)
		}
	}
	for _, not := range []string{"cannot read the", "plugins dir:"} {
		if strings.Contains(stderr, not) {
			t.Errorf("validate still reports %q:\n%s", not, stderr)
		}
	}
}

// validate refuses headers no request can carry, and shows a URL's
// credentials masked.
func TestValidateHeadersAndMaskedURL(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"skillgate.yaml": `servers:
  r:
    url: http://127.0.0.1:9/mcp
    headers: {"Bad Key": x, Host: h, authorization: a, Authorization: b}
  badurl: {url: "htp://x:PWSECRET2@host/mcp?k=QSECRET2"}
`})
	_, stderr, err := runCLI(t, "validate", filepath.Join(dir, "skillgate.yaml"))
	if err == nil {
		t.Fatal("validate accepted the headers")
	}
	for _, want := range []string{`servers.r.headers.Bad Key: "Bad Key" is not a header name`, "servers.r.headers.Host: Host is a header the gateway sets itself",
		"servers.r.headers.Authorization: Authorization is also written authorization", `"htp://x:xxxxx@host/mcp?k=xxxxx" is not an http(s) URL`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "SECRET2") {
		t.Errorf("a URL credential is shown:\n%s", stderr)
	}
}

// import's notes cite the imported file, and each literal secret gets a
// note naming where it is, masked.
func TestImportNotesCiteTheFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "claude.json")
	writeFile(t, src, `{"mcpServers": {
  "remote": {"url": "https://h/mcp?key=QSECRET", "headers": {"Authorization": "Bearer LITERALSECRET"}},
  "tok": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${SKILLGATE_TEST_UNSET_TOKEN}"}}
}}`)
	_, stderr, err := runCLI(t, "import", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		src + ":3:47: servers.tok.headers.Authorization: undefined variable ${SKILLGATE_TEST_UNSET_TOKEN}",
		src + ":2:62: remote.headers.Authorization: holds a literal secret",
		src + ":2:21: remote.url: holds the query value key in clear",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("import lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "the imported servers:") || strings.Contains(stderr, "SECRET") {
		t.Errorf("import cites the generated YAML or shows a secret:\n%s", stderr)
	}
}

// validate checks the tool folders too: a tool.yaml with a problem (a
// misspelt schema type; a service the config lacks) is reported at its
// file:line as an error, as the gateway would serve the folder as
// invalid; a sound folder next to it is fine.
func TestValidateToolFolders(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skillgate.yaml":      "tools: {dirs: [./tools]}\n",
		"tools/bad/tool.yaml": "name: bad\ndescription: d\nruntime: bash\nentry: run.sh\ninput_schema: {type: object, properties: {a: {type: strng}}}\n",
		"tools/bad/run.sh":    "echo hi\n",
		"tools/db/tool.yaml":  "name: db\ndescription: d\nruntime: bash\nentry: run.sh\nrequires: [db]\n",
		"tools/db/run.sh":     "echo hi\n",
		"tools/ok/tool.yaml":  "name: ok\ndescription: d\nruntime: bash\nentry: run.sh\n",
		"tools/ok/run.sh":     "echo hi\n",
	})
	cfg := filepath.Join(dir, "skillgate.yaml")
	out, stderr, err := runCLI(t, "validate", "--json", cfg)
	var code exitError
	if !errors.As(err, &code) || code != 1 {
		t.Fatalf("validate --json: %v, stderr %q; want exit 1", err, stderr)
	}
	var got validateJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var msgs []string
	for _, p := range got.Problems {
		if p.Source != "tool" {
			continue
		}
		msgs = append(msgs, p.Message)
		if !strings.HasPrefix(p.File, filepath.Join(dir, "tools")) || filepath.Base(p.File) != "tool.yaml" || p.Line == 0 || p.Severity != "error" {
			t.Errorf("tool problem %+v; want an error at a tool.yaml's line", p)
		}
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{`unknown service "db"`, `"strng" is not a JSON Schema type`} {
		if !strings.Contains(all, want) {
			t.Errorf("tool problems lack %q:\n%s", want, all)
		}
	}
	if len(msgs) != 2 {
		t.Errorf("%d tool problems, want 2 (ok/ is fine):\n%s", len(msgs), all)
	}
}

// A config whose only skills come from a repository serves something:
// validate does not say it serves nothing.
func TestValidateReposOnly(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"skillgate.yaml": "skills: {repos: [{name: team, url: \"https://example.com/skills.git\"}]}\n"})
	_, stderr, err := runCLI(t, "validate", filepath.Join(dir, "skillgate.yaml"))
	if err != nil || strings.Contains(stderr, "serves nothing") {
		t.Errorf("validate of a repos-only config: %v, %q; want no 'serves nothing'", err, stderr)
	}
}
