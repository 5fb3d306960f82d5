package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
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
		c.Limits.ShutdownGrace != Duration(5*time.Second) || c.Limits.PluginKillWindow != Duration(2*time.Second) {
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
