package toolspec

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/yamldoc"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestErrorGolden parses every testdata/errors/*.yaml, which are all invalid,
// and compares the messages with the .golden file next to it.
func TestErrorGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, err = Parse(f, filepath.Base(file))
			if err == nil {
				t.Fatal("Parse succeeded; every file here is invalid")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("messages differ from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

const full = `
name: word_count
title: Word count
description: Count the words of a text.
version: "1.2"
input_schema:
  type: object
  properties:
    text: {type: string, description: The text.}
    max: {type: integer, minimum: 1}
  required: [text]
output_schema:
  type: object
  properties: {words: {type: integer}}
runtime: python
entry: main.py
args: ["--lang", "{lang}"]
protocol: jsonrpc
mode: persistent
timeout: 90s
stall_timeout: 5s
env: [LANG]
secrets: [SKILLGATE_API_KEY]
annotations: {readOnlyHint: true, openWorldHint: false}
sandbox:
  enabled: true
  network: false
  mounts: [/usr/share/dict, {path: data, at: /data}]
ulimits: {memory: 256MiB, processes: 32, open_files: 64, cpu: 10s, file_size: 1M}
dependencies: {pip: [./vendor/wc]}
requires: [postgres]
`

// YAML problems are reported where they are, as in skillgate.yaml and
// pipeline files, and aliases are bounded by what they bring, not by the
// size of the file.
func TestParseYAMLProblems(t *testing.T) {
	head := "name: t\ndescription: d\nruntime: bash\nentry: main.sh\n"
	tests := []struct{ name, in, want string }{
		{"key indented too little", head + "input_schema:\n  type: object\n  properties:\n    a: {type: string}\n   b: {type: string}\n",
			"tool.yaml:9:4: invalid YAML: did not find expected key; this line does not line up with the keys above it"},
		{"not UTF-8", "name: t\ndescription: caf\xe9\n", "tool.yaml:2:17: byte 0xe9 is not UTF-8; the file must be UTF-8 text"},
		{"a long list", head + "input_schema: {type: object, properties: {a: {enum: [" + strings.Repeat("1, ", yamldoc.MaxAliasValues) + "1]}}}\n", ""},
		{"an alias loop", head + "args: &a [x, *a]\n", "tool.yaml:5:14: args[1]: alias *a refers to itself"},
		{"a misspelt type", head + "input_schema:\n  type: object\n  properties:\n    a: {type: strng}\n",
			`tool.yaml:8:15: input_schema.properties.a.type: "strng" is not a JSON Schema type; did you mean "string"?`},
		{"a misspelt type in a list", head + "input_schema:\n  type: object\n  properties:\n    a: {type: [\"null\", integr]}\n",
			`tool.yaml:8:24: input_schema.properties.a.type[1]: "integr" is not a JSON Schema type; did you mean "integer"?`},
		{"a property named type, and data", head + "input_schema:\n  type: object\n  properties:\n    type: {type: string, default: {type: zz}, enum: [{type: q}]}\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), "tool.yaml")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %.300v, want no error", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("got  %.300v\nwant %s...", err, tc.want)
			}
		})
	}
}

func TestParseFull(t *testing.T) {
	tool, err := Parse(strings.NewReader(full), "tool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	want := &Tool{
		Name: "word_count", Title: "Word count", Description: "Count the words of a text.", Version: "1.2",
		InputSchema:  json.RawMessage(`{"properties":{"max":{"minimum":1,"type":"integer"},"text":{"description":"The text.","type":"string"}},"required":["text"],"type":"object"}`),
		OutputSchema: json.RawMessage(`{"properties":{"words":{"type":"integer"}},"type":"object"}`),
		Runtime:      RuntimePython, Entry: "main.py", Args: []string{"--lang", "{lang}"},
		Protocol: ProtocolJSONRPC, Mode: ModePersistent,
		Timeout: Duration(90e9), StallTimeout: Duration(5e9),
		Env: []string{"LANG"}, Secrets: []string{"SKILLGATE_API_KEY"},
		Annotations:  &Annotations{ReadOnlyHint: &yes, OpenWorldHint: &no},
		Sandbox:      Sandbox{Enabled: true, Mounts: []Mount{{Path: "/usr/share/dict"}, {Path: "data", At: "/data"}}},
		Ulimits:      Ulimits{Memory: 256 << 20, Processes: 32, OpenFiles: 64, CPU: Duration(10e9), FileSize: 1 << 20},
		Dependencies: Dependencies{Pip: []string{"./vendor/wc"}},
		Requires:     []string{"postgres"},
	}
	if !reflect.DeepEqual(tool, want) {
		a, _ := json.MarshalIndent(tool, "", " ")
		b, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("got\n%s\nwant\n%s", a, b)
	}

	// The JSON form round-trips, as a Spec's Tool must.
	data, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	var back Tool
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, tool) {
		t.Errorf("JSON round trip changed the tool:\n%s", data)
	}
	if err := back.Validate(); err != nil {
		t.Errorf("Validate after round trip: %v", err)
	}

	def := string(tool.Definition())
	wantDef := `{"name":"word_count","title":"Word count","description":"Count the words of a text.","inputSchema":{"properties":{"max":{"minimum":1,"type":"integer"},"text":{"description":"The text.","type":"string"}},"required":["text"],"type":"object"},"outputSchema":{"properties":{"words":{"type":"integer"}},"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`
	if def != wantDef {
		t.Errorf("Definition() =\n%s\nwant\n%s", def, wantDef)
	}
}

func TestDefinitionDefaults(t *testing.T) {
	tool, err := Parse(strings.NewReader("name: a\ndescription: d\nruntime: bash\nentry: a.sh\n"), "tool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(tool.Definition()), `{"name":"a","description":"d","inputSchema":{"type":"object"}}`; got != want {
		t.Errorf("Definition() = %s, want %s", got, want)
	}
	if tool.ProtocolOrDefault() != ProtocolSimple || tool.ModeOrDefault() != ModePerCall {
		t.Errorf("defaults: %s %s", tool.ProtocolOrDefault(), tool.ModeOrDefault())
	}
}

func TestByteSizeAndDuration(t *testing.T) {
	for in, want := range map[string]ByteSize{`1024`: 1024, `"1KiB"`: 1024, `"2 MB"`: 2 << 20, `"1G"`: 1 << 30, `"7B"`: 7} {
		var b ByteSize
		if err := json.Unmarshal([]byte(in), &b); err != nil || b != want {
			t.Errorf("ByteSize %s = %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{`-1`, `"x"`, `"-1K"`, `"99999999999G"`, `true`} {
		var b ByteSize
		if err := json.Unmarshal([]byte(in), &b); err == nil {
			t.Errorf("ByteSize %s = %d, want an error", in, b)
		}
	}
	var d Duration
	if err := json.Unmarshal([]byte(`"1m30s"`), &d); err != nil || d.Std().Seconds() != 90 {
		t.Errorf("Duration = %v, %v", d, err)
	}
	for _, in := range []string{`30`, `"-1s"`, `"soon"`} {
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("Duration %s: want an error", in)
		}
	}
}

// writeTool makes a tool folder with the given files (name -> content).
func writeTool(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadJail(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "evil.py"), []byte("print(1)"), 0o644); err != nil {
		t.Fatal(err)
	}
	const head = "name: t\ndescription: d\nruntime: python\n"

	ok := writeTool(t, map[string]string{"tool.yaml": head + "entry: sub/main.py\n", "sub/main.py": "", "sub/link.py": ""})
	if _, err := Load(ok); err != nil {
		t.Fatalf("Load: %v", err)
	}
	// A symlink that stays inside is fine.
	if err := os.Symlink("main.py", filepath.Join(ok, "sub", "alias.py")); err != nil {
		t.Fatal(err)
	}
	if p, err := Resolve(ok, "sub/alias.py"); err != nil || filepath.Base(p) != "main.py" {
		t.Errorf("Resolve inside symlink = %q, %v", p, err)
	}

	cases := map[string]struct {
		files map[string]string
		link  [2]string // symlink name -> target
		want  string
	}{
		"dotdot":   {files: map[string]string{"tool.yaml": head + "entry: ../x.py\n"}, want: "leaves the tool folder"},
		"absolute": {files: map[string]string{"tool.yaml": head + "entry: /etc/passwd\n"}, want: "is absolute"},
		"missing":  {files: map[string]string{"tool.yaml": head + "entry: nope.py\n"}, want: "does not exist"},
		"symlink file": {files: map[string]string{"tool.yaml": head + "entry: main.py\n"},
			link: [2]string{"main.py", filepath.Join(outside, "evil.py")}, want: "through a symlink"},
		"symlink dir": {files: map[string]string{"tool.yaml": head + "entry: lib/evil.py\n"},
			link: [2]string{"lib", outside}, want: "through a symlink"},
		"directory":           {files: map[string]string{"tool.yaml": head + "entry: sub\n", "sub/x": ""}, want: "not a regular file"},
		"exec not executable": {files: map[string]string{"tool.yaml": "name: t\ndescription: d\nruntime: exec\nentry: run\n"}, want: "not executable"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := writeTool(t, c.files)
			if c.link[0] != "" {
				if err := os.Symlink(c.link[1], filepath.Join(dir, c.link[0])); err != nil {
					t.Fatal(err)
				}
			}
			if name == "exec not executable" {
				if err := os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load = %v, want an error containing %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "tool.yaml:4:1: entry:") {
				t.Errorf("error does not point at entry: %v", err)
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	dir := writeTool(t, map[string]string{"main.py": ""})
	spec := map[string]any{
		"dir":    dir,
		"tool":   map[string]any{"name": "t", "description": "d", "runtime": "python", "entry": "main.py"},
		"limits": map[string]any{"stall_timeout": "2s", "output_cap": "64KiB", "concurrency": 2},
	}
	raw, _ := json.Marshal(spec)
	s, err := ParseSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	if s.Limits.OutputCap != 64<<10 || s.Limits.StallTimeout.Std().Seconds() != 2 || s.Tool.Entry != "main.py" {
		t.Errorf("spec = %+v", s)
	}
	for name, bad := range map[string]string{
		"unknown key":  `{"dir":"` + dir + `","tool":{"name":"t","description":"d","runtime":"python","entry":"main.py","nope":1}}`,
		"relative dir": `{"dir":"x","tool":{"name":"t","description":"d","runtime":"python","entry":"main.py"}}`,
		"bad tool":     `{"dir":"` + dir + `","tool":{"name":"t","runtime":"python","entry":"../main.py"}}`,
		"escape":       `{"dir":"` + dir + `","tool":{"name":"t","description":"d","runtime":"python","entry":"missing.py"}}`,
		"two values":   `{} {}`,
	} {
		if _, err := ParseSpec([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: ParseSpec = %v, want ErrInvalid", name, err)
		}
	}
}

// TestLoadForReportsAllAtOnce: a problem in the definition does not hide
// the problems of the files it names and of the services it requires, so
// one `skillgate validate` shows every fix to make.
func TestLoadForReportsAllAtOnce(t *testing.T) {
	dir := writeTool(t, map[string]string{"tool.yaml": "name: t\ndescription: d\nruntime: python\nentry: nope.py\ntimeout: soon\nrequires: [postgress]\n"})
	_, err := LoadFor(dir, []string{"postgres"})
	if err == nil {
		t.Fatal("LoadFor: want an error")
	}
	for _, want := range []string{
		"tool.yaml:4:1: entry: ", "does not exist",
		"tool.yaml:5:",
		`tool.yaml:6:1: requires[0]: unknown service "postgress"; did you mean "postgres"?`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
