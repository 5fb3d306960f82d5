package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/yamldoc"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var testEnv = map[string]string{"HOME": "/home/test", "TOKEN": "s3cret", "EMPTY": ""}

func lookupTest(k string) (string, bool) { v, ok := testEnv[k]; return v, ok }

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestGolden(t *testing.T) {
	errLine := regexp.MustCompile(`^testdata/invalid/([a-z_]+\.d/)?[a-z_]+\.yaml:\d+(:\d+)?: `)
	for _, dir := range []string{"valid", "invalid"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no %s configs: %v", dir, err)
		}
		for _, path := range files {
			t.Run(dir+"/"+filepath.Base(path), func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := Parse(bytes.NewReader(data), path, lookupTest)
				var got []byte
				if dir == "valid" {
					if err != nil {
						t.Fatalf("Parse: %v", err)
					}
					if err := cfg.Validate(); err != nil {
						t.Errorf("Validate after Parse: %v", err)
					}
					got, _ = json.MarshalIndent(cfg, "", "  ")
					got = append(got, '\n')
				} else {
					if err == nil {
						t.Fatal("Parse succeeded, want errors")
					}
					for _, line := range strings.Split(err.Error(), "\n") {
						if !errLine.MatchString(line) {
							t.Errorf("error without file:line: %q", line)
						}
					}
					got = []byte(err.Error() + "\n")
				}
				golden(t, strings.TrimSuffix(path, ".yaml")+".golden", got)
			})
		}
	}
}

func TestErrorValues(t *testing.T) {
	_, err := Parse(strings.NewReader("servers:\n  r: {url: \"${URL}\"}\n  s: {}\n"), "f.yaml", nil)
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("err = %T, want errors.Join", err)
	}
	var got []string
	for _, e := range joined.Unwrap() {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("%T is not *Error", e)
		}
		got = append(got, ce.Field+"@"+ce.Pos.String())
	}
	if want := []string{"servers.r.url@f.yaml:2:12", "servers.s@f.yaml:3:3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("errors = %v, want %v", got, want)
	}
	if !errors.Is(err, ErrUndefinedVariable) {
		t.Errorf("errors.Is(err, ErrUndefinedVariable) = false for %v", err)
	}
}

func TestParseEnv(t *testing.T) {
	tests := []struct {
		name, yaml string
		env        map[string]string
		want       string // Servers["s"].Command, or the error
	}{
		{"set", "servers: {s: {command: '${BIN}'}}", map[string]string{"BIN": "node"}, "node"},
		{"default", "servers: {s: {command: '${BIN:-npx}'}}", nil, "npx"},
		{"empty uses default", "servers: {s: {command: '${BIN:-npx}'}}", map[string]string{"BIN": ""}, "npx"},
		{"nested default", "servers: {s: {command: '${BIN:-${ALT:-deno}}'}}", nil, "deno"},
		{"escape", "servers: {s: {command: 'echo $${X}'}}", nil, "echo ${X}"},
		{"lone dollar", "servers: {s: {command: 'echo $X $'}}", nil, "echo $X $"},
		{"keys are not expanded", "servers: {'${S}': {command: x}}", map[string]string{"S": "s"},
			`f.yaml:1:11: servers.${S}: server name "${S}" must be 1-64 letters, digits, _ or -; rename it`},
		{"unset", "servers:\n  s:\n    command: ${BIN}\n", nil,
			"f.yaml:3:14: servers.s.command: undefined variable ${BIN}; set BIN in the environment or give a default: ${BIN:-value}"},
		{"unset in a list", "servers: {s: {command: x, args: [a, '${A}']}}", nil,
			"f.yaml:1:37: servers.s.args[1]: undefined variable ${A}; set A in the environment or give a default: ${A:-value}"},
		{"integer from a variable", "servers: {s: {command: x, priority: '${P}'}}", map[string]string{"P": "7"}, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			cfg, err := Parse(strings.NewReader(tt.yaml), "f.yaml", lookup)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				got = cfg.Servers["s"].Command
			}
			if got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "1", "E": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${A}${A}-${A:-x}", "11-1", ""},
		{"${E}|${E:-d}", "|d", ""},
		{"${B:-x:-y}", "x:-y", ""},
		{"${B:-}", "", ""},
		{"$${A} $$${A}", "${A} $${A}", ""},
		{"$A $ {A}", "$A $ {A}", ""},
		{"${B}", "", "undefined variable ${B}"},
		{"${B:-${C}}", "", "undefined variable ${C}"},
		{"${A", "", `unterminated "${A"`},
		{"${}", "", "invalid variable reference ${}"},
		{"${env:A}", "", "invalid variable reference ${env:A}"},
		{"${A-x}", "", "invalid variable reference ${A-x}"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Expand(tt.in, lookup)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Expand(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	if c.Listen.HTTP != "127.0.0.1:8811" || c.Names.Separator != "__" || c.Names.Collisions != "prefix" ||
		c.Limits.RequestTimeout != Duration(time.Minute) || c.Limits.MaxRequestTimeout != Duration(10*time.Minute) ||
		c.Limits.StallTimeout != Duration(20*time.Second) || c.Limits.ScriptOutputCap != 1<<20 ||
		c.Limits.ScriptConcurrency != 8 || c.Limits.HTTPBodyCap != 4<<20 ||
		c.Limits.ShutdownGrace != Duration(5*time.Second) || c.Limits.PluginKillWindow != Duration(10*time.Second) ||
		c.Limits.StartWait != Duration(8*time.Second) || c.Limits.DrainTimeout != Duration(5*time.Second) {
		t.Errorf("Default() = %+v", c)
	}
	if len(c.Servers) != 0 {
		t.Errorf("Default() has servers: %v", c.Servers)
	}
}

func TestBuiltinDefault(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"examples/tools", "examples/skills"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "examples", "plugins"), nil, 0o644); err != nil {
		t.Fatal(err) // a file, not a folder: not used
	}
	t.Chdir(dir)
	c := BuiltinDefault()
	got := [][]string{c.Tools.Dirs, c.Pipelines.Dirs, c.Skills.Dirs, c.Plugins.Dirs}
	want := [][]string{{"examples/tools"}, nil, {"examples/skills"}, nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dirs = %q, want %q", got, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "skillgate.yaml")
	t.Setenv("SKILLGATE_TEST_BIN", "node")
	data := "servers:\n  s: {command: '${SKILLGATE_TEST_BIN}', cwd: srv}\ntools: {dirs: [tools]}\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Servers["s"]; s.Command != "node" || s.Cwd != filepath.Join(dir, "srv") || s.Start != "eager" {
		t.Errorf("server = %+v", s)
	}
	if got := c.Tools.Dirs; len(got) != 1 || got[0] != filepath.Join(dir, "tools") {
		t.Errorf("tools.dirs = %q", got)
	}
	if c.Source != path {
		t.Errorf("Source = %q", c.Source)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrNotExist", err)
	}
}

func TestServerKind(t *testing.T) {
	tests := []struct {
		s    Server
		want string
	}{
		{Server{Command: "npx"}, "stdio"},
		{Server{Command: "npx", Transport: "stdio"}, "stdio"},
		{Server{URL: "http://x/mcp"}, "http"},
		{Server{URL: "http://x/mcp", Transport: "streamable-http"}, "http"},
		{Server{URL: "http://x/sse", Transport: "sse"}, "sse"},
	}
	for _, tt := range tests {
		if got := tt.s.Kind(); got != tt.want {
			t.Errorf("%+v.Kind() = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// TestServerEqual changes each field in turn, so a field added to Server
// but forgotten in Equal fails here.
func TestServerEqual(t *testing.T) {
	ns := "x"
	base := Server{Command: "a", Args: []string{"b"}, Env: map[string]string{"c": "d"}, Namespace: &ns}
	if !base.Equal(&base) {
		t.Fatal("a server is not Equal to itself")
	}
	moved := base
	moved.Pos = Pos{File: "f", Line: 3}
	if !base.Equal(&moved) {
		t.Error("Equal looks at Pos")
	}
	empty := Server{Args: []string{}, Env: map[string]string{}}
	if !(&Server{}).Equal(&empty) {
		t.Error("nil and empty collections differ")
	}
	if (&Server{}).Equal(nil) || !(*Server)(nil).Equal(nil) {
		t.Error("Equal mishandles nil")
	}
	typ := reflect.TypeFor[Server]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Pos" {
			continue
		}
		changed := base
		changed.Args = []string{"b"}
		v := reflect.ValueOf(&changed).Elem().Field(i)
		switch f.Type.Kind() {
		case reflect.String:
			v.SetString("changed")
		case reflect.Int, reflect.Int64:
			v.SetInt(42)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Float64:
			v.SetFloat(1.5)
		case reflect.Slice:
			v.Set(reflect.ValueOf([]string{"changed"}))
		case reflect.Map:
			v.Set(reflect.ValueOf(map[string]string{"changed": "1"}))
		case reflect.Pointer:
			other := "changed"
			v.Set(reflect.ValueOf(&other))
		case reflect.Interface:
			v.Set(reflect.ValueOf(errors.New("changed")))
		default:
			t.Fatalf("field %s: teach this test its kind", f.Name)
		}
		if base.Equal(&changed) {
			t.Errorf("Equal ignores %s", f.Name)
		}
	}
}

func TestScalars(t *testing.T) {
	tests := []struct {
		in   string
		size Size
		dur  Duration
		err  bool
	}{
		{in: "1MiB", size: 1 << 20},
		{in: "512 KiB", size: 512 << 10},
		{in: "2gb", size: 2e9},
		{in: "100B", size: 100},
		{in: "1048576", size: 1 << 20},
		{in: "1.5MiB", err: true},
		{in: "99999999999GiB", err: true},
	}
	for _, tt := range tests {
		var s Size
		err := s.UnmarshalText([]byte(tt.in))
		if (err != nil) != tt.err || (err == nil && s != tt.size) {
			t.Errorf("Size(%q) = %d, %v", tt.in, s, err)
		}
	}
	for in, want := range map[Size]string{0: "0", 1 << 20: "1MiB", 1536: "1536", 3072: "3KiB", 1000: "1000", 4 << 30: "4GiB"} {
		if got := in.String(); got != want {
			t.Errorf("Size(%d).String() = %q, want %q", int64(in), got, want)
		}
	}
	var d Duration
	if err := d.UnmarshalText([]byte("1m30s")); err != nil || d != Duration(90*time.Second) {
		t.Errorf("Duration(1m30s) = %v, %v", d, err)
	}
	if err := d.UnmarshalText([]byte("30")); err == nil || !strings.Contains(err.Error(), "no unit") {
		t.Errorf("Duration(30) error = %v", err)
	}
	if got := (Pos{File: "f", Line: 2, Col: 3}).String(); got != "f:2:3" {
		t.Errorf("Pos.String() = %q", got)
	}
}

// TestExampleConfigs: every examples/*/skillgate.yaml is valid.
func TestExampleConfigs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*", "skillgate.yaml"))
	if len(files) < 3 {
		t.Fatalf("found %d example configs, want the federation, services and disclosure ones", len(files))
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestSyntaxErrors: a YAML syntax error is reported at the line and column
// of the problem (yaml.v3 prints the line of the enclosing construct, 0-based,
// and no column), with what to do.
func TestSyntaxErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"key indented too little", "servers:\n  a:\n    command: echo\n   args: [x]\n  b: {}\n",
			"f.yaml:4:4: invalid YAML: did not find expected key; this line does not line up with the keys above it"},
		{"item among keys", "a: 1\n- b\n", "f.yaml:2:1: invalid YAML: did not find expected key; "},
		{"key among items", "a:\n  - x\n  y: 1\n",
			"f.yaml:3:3: invalid YAML: did not find expected '-' indicator; this line does not line up with the items of the list above it"},
		{"unclosed [ at the end", "servers:\n  a:\n    command: echo\n    args: [x\n",
			"f.yaml:4:11: invalid YAML: did not find expected ',' or ']'; this [ is not closed: end the list with ], and separate its items with commas"},
		{"unclosed [ before more", "servers:\n  a:\n    args: [x\n  b: {command: y}\n", "f.yaml:3:11: invalid YAML: did not find expected ',' or ']'; this [ is not closed"},
		{"unclosed [ ending its line", "args: [\n  \"-y\",\n  \"pkg\"\nx: 1\n", "f.yaml:1:7: invalid YAML: did not find expected ',' or ']'; this [ is not closed"},
		{"unclosed { on line 2", "servers:\n  a: {command: npx\n  b: {command: x}\n",
			"f.yaml:2:6: invalid YAML: did not find expected ',' or '}'; this { is not closed: end the mapping with }"},
		{"unclosed { on line 1", "servers: {\n  a: 1\n", "f.yaml:1:10: invalid YAML: did not find expected ',' or '}'; this { is not closed"},
		{"inner [ closed by }", "a: {b: [c, d}\n", "f.yaml:1:8: invalid YAML: did not find expected ',' or ']'; this [ is not closed"},
		{"columns count characters", "servers:\n  ä: {command: \"é\", args: [x\n", "f.yaml:2:27: invalid YAML: did not find expected ',' or ']'"},
		{"valid flow list before the error", "servers:\n  a:\n    args: [a,\n      b]\n    command: x\n   env: {}\n", "f.yaml:6:4: invalid YAML: did not find expected key"},
		{"[ with nothing after it", "a: [\n", "f.yaml:1:4: invalid YAML: did not find expected node content; this [ is not closed"},
		{"missing colon", "servers:\n  a:\n    command: echo\n  oops\n  b: x\n",
			"f.yaml:4:3: invalid YAML: could not find expected ':'; a key needs a : after it"},
		{"colon in a value", "a: b: c\n", "f.yaml:1:5: invalid YAML: mapping values are not allowed in this context; quote the value if it contains ': '"},
		{"unclosed quote on line 1", "a: 'x\nb: 2\n", "f.yaml:1:4: invalid YAML: found unexpected end of stream; this quoted value is not closed"},
		{"unclosed quote on line 2", "a: 1\nb: \"x\nc: 2\n", "f.yaml:2:4: invalid YAML: found unexpected end of stream; this quoted value is not closed"},
		{"tab", "a:\n\t- b\n", "f.yaml:2:1: invalid YAML: found character that cannot start any token; this is a tab: indent with spaces"},
		{"at sign", "a: @x\n", "f.yaml:1:4: invalid YAML: found character that cannot start any token; a value cannot start with '@': quote the value"},
		{"unknown anchor", "a: 1\nb: *nope\n", "f.yaml:2:4: invalid YAML: unknown anchor 'nope' referenced; define &nope before this point"},
		{"in the second document", "a: 1\n---\nb: [\n", "f.yaml:3:4: invalid YAML: did not find expected node content"},
		{"control character", "a: \x01\n", "f.yaml:1:4: invalid YAML: control characters are not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.yaml), "f.yaml", nil)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got  %v\nwant %s...", err, tt.want)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || err.Error() != dir+": is a directory, not a config file; give the path of a YAML file such as skillgate.yaml" {
		t.Errorf("Load(folder) = %v", err)
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := Parse(f, "adir", nil); err == nil || err.Error() != "adir: is a directory, not a config file; give the path of a YAML file such as skillgate.yaml" {
		t.Errorf("Parse(folder) = %v", err)
	}
	for in, want := range map[string]string{
		"servers:\n  a: {command: \"caf\xe9\"}\n": "f.yaml:2:20: byte 0xe9 is not UTF-8; the file must be UTF-8 text",
		"\xff\xfeservers: {}\n":                   "f.yaml:", // UTF-16 is left to yaml.v3
		"a: \xc3(\n":                              "f.yaml:1:4: byte 0xc3 is not UTF-8",
	} {
		_, err := Parse(strings.NewReader(in), "f.yaml", nil)
		if err == nil || !strings.HasPrefix(err.Error(), want) || (want == "f.yaml:" && strings.Contains(err.Error(), "UTF-8 text")) {
			t.Errorf("Parse(%q) = %v, want %s...", in, err, want)
		}
	}
}

// TestEmptyVariable: a required value that a set but empty variable
// emptied is reported as that, not as missing.
func TestEmptyVariable(t *testing.T) {
	env := map[string]string{"MCP_URL": "", "BIN": "", "IMG": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	in := "servers:\n  r: {url: \"${MCP_URL}\"}\n  c: {command: \"${BIN}${NOPE:-}\"}\nservices:\n  db: {image: \"$IMG${IMG}\"}\n"
	_, err := Parse(strings.NewReader(in), "f.yaml", lookup)
	want := `f.yaml:2:12: servers.r.url: empty after expanding "${MCP_URL}": MCP_URL is set to an empty value; set it, or give a default: ${MCP_URL:-value}
f.yaml:3:16: servers.c.command: empty after expanding "${BIN}${NOPE:-}": BIN is set to an empty value; set it, or give a default: ${BIN:-value}
f.yaml:5:15: services.db.image: "$IMG" is not an image reference; write it as name:tag, such as postgres:16`
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

func TestServerCommandPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "skillgate.yaml")
	data := "servers:\n" +
		"  rel: {command: ./my-server}\n" +
		"  sub: {command: bin/server}\n" +
		"  up: {command: ../other/server}\n" +
		"  bare: {command: npx}\n" +
		"  abs: {command: /usr/bin/server}\n" +
		"  incwd: {command: ./server, cwd: srv}\n" +
		"  image: {image: mcp/x:1, args: [./a]}\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // what a desktop client does
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"rel":   filepath.Join(dir, "my-server"),
		"sub":   filepath.Join(dir, "bin", "server"),
		"up":    filepath.Join(filepath.Dir(dir), "other", "server"),
		"bare":  "npx",
		"abs":   "/usr/bin/server",
		"incwd": "./server", // the executor resolves it against cwd
		"image": "",
	}
	for name, w := range want {
		if got := c.Servers[name].Command; got != w {
			t.Errorf("%s: command = %q, want %q", name, got, w)
		}
	}
	if got := c.Servers["incwd"].Cwd; got != filepath.Join(dir, "srv") {
		t.Errorf("incwd: cwd = %q", got)
	}
	if got := c.Servers["image"].Args; got[0] != "./a" {
		t.Errorf("image: args = %q, want them as written", got)
	}
	// A config file named relative to the working folder: the command stays
	// a path, not a name looked up in PATH.
	for src, want := range map[string]string{"skillgate.yaml": "./my-server", "conf/sg.yaml": "conf/my-server", "<stdin>": "./my-server"} {
		c, err := Parse(strings.NewReader("servers: {s: {command: ./my-server}}"), src, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Servers["s"].Command; got != filepath.FromSlash(want) {
			t.Errorf("from %s: command = %q, want %q", src, got, want)
		}
	}
}

func TestManyProblems(t *testing.T) {
	var b strings.Builder
	b.WriteString("servers:\n")
	for i := range 150 {
		fmt.Fprintf(&b, "  s%d: {}\n", i)
	}
	_, err := Parse(strings.NewReader(b.String()), "f.yaml", nil)
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 101 || !strings.HasPrefix(lines[99], "f.yaml:101:3: servers.s99: neither") {
		t.Errorf("got %d lines, line 100 %q", len(lines), lines[min(99, len(lines)-1)])
	}
	if last := lines[len(lines)-1]; last != "f.yaml: ... and 50 more problems; fix these first" {
		t.Errorf("last line = %q", last)
	}
}

// TestLargeFile: a big file without aliases is no "alias" problem.
func TestLargeFile(t *testing.T) {
	in := "pinned: [" + strings.Repeat("a, ", yamldoc.MaxAliasValues) + "b]\n"
	c, err := Parse(strings.NewReader(in), "f.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pinned) != yamldoc.MaxAliasValues+1 {
		t.Errorf("%d pinned", len(c.Pinned))
	}
}
