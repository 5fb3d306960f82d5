package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// A command group fails on an unknown subcommand, as the root does.
func TestUnknownSubcommand(t *testing.T) {
	for _, group := range []string{"tools", "pipeline", "skills", "services"} {
		_, _, err := runCLI(t, group, "nosuch")
		if err == nil || !strings.Contains(err.Error(), `unknown command "nosuch" for "skillgate `+group+`"`) {
			t.Errorf("%s nosuch: err = %v", group, err)
		}
	}
	// help of a topic it does not know fails, with did-you-mean.
	for args, want := range map[string]string{
		"help bogus":     `unknown help topic "bogus"; the commands are call, completion, import`,
		"help tools lst": `unknown help topic "tools lst"; did you mean "list"? (see skillgate tools --help)`,
	} {
		if _, _, err := runCLI(t, strings.Fields(args)...); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v, want %s...", args, err, want)
		}
	}
	if out, _, err := runCLI(t, "help", "tools", "list"); err != nil || !strings.Contains(out, "skillgate tools list [flags]") {
		t.Errorf("help tools list: %v\n%s", err, out)
	}
	// So does cobra's completion command, naming the shells it knows.
	for arg, want := range map[string]string{
		"bogus": `unknown shell "bogus" for "skillgate completion"; the shells are bash, fish, powershell, zsh (see skillgate completion --help)`,
		"bas":   `unknown shell "bas" for "skillgate completion"; did you mean "bash"? (see skillgate completion --help)`,
	} {
		if _, _, err := runCLI(t, "completion", arg); err == nil || err.Error() != want {
			t.Errorf("completion %s: err = %v, want %s", arg, err, want)
		}
	}
	if out, _, err := runCLI(t, "tools"); err != nil || !strings.Contains(out, "Available Commands") {
		t.Errorf("tools alone: %v, %q; want its help", err, out)
	}
	for _, args := range [][]string{{"--log-level", "loud", "version"}, {"--disclosure", "some", "version"}, {"--log-format", "xml", "version"}} {
		if _, _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: err = %v", args, err)
		}
	}
}

func TestToolArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"},"maybe":{"type":["string","null"]},"either":{"type":["string","number"]},"n":{"type":"integer"}}}`)
	for _, c := range []struct {
		name   string
		in     toolArgs
		schema json.RawMessage
		want   string
		err    string
	}{
		{"typed values", toolArgs{kv: []string{"n=42", "b=true", "o={\"x\":1}", "s=hello", "e="}}, nil, `{"b":true,"e":"","n":42,"o":{"x":1},"s":"hello"}`, ""},
		{"every digit kept", toolArgs{rawJSON: `{"big":12345678901234567890}`, kv: []string{"n=9007199254740993"}}, nil, `{"big":12345678901234567890,"n":9007199254740993}`, ""},
		{"--arg over --json", toolArgs{rawJSON: `{"a":1,"b":2}`, kv: []string{"b=3"}}, nil, `{"a":1,"b":3}`, ""},
		{"string properties stay text", toolArgs{kv: []string{"message=123", "maybe=true", "either=7", "n=5"}}, schema, `{"either":7,"maybe":"true","message":"123","n":5}`, ""},
		{"a quoted string is JSON", toolArgs{kv: []string{`message="a b"`}}, schema, `{"message":"a b"}`, ""},
		{"--json null", toolArgs{rawJSON: "null", kv: []string{"a=1"}}, nil, "", `--json must be a JSON object such as '{"name":"value"}', not null`},
		{"--json array", toolArgs{rawJSON: "[]"}, nil, "", `--json must be a JSON object such as '{"name":"value"}', not an array`},
		{"--json string", toolArgs{rawJSON: ` "hi" `}, nil, "", `--json must be a JSON object such as '{"name":"value"}', not a string`},
		{"--json number", toolArgs{rawJSON: "42"}, nil, "", `--json must be a JSON object such as '{"name":"value"}', not a number`},
		{"--json boolean", toolArgs{rawJSON: "true"}, nil, "", `--json must be a JSON object such as '{"name":"value"}', not a boolean`},
		{"--json blank", toolArgs{rawJSON: " "}, nil, "", `--json must be a JSON object such as '{"name":"value"}', not empty text`},
		{"--json trailing", toolArgs{rawJSON: `{"a":1} x`}, nil, "",
			`--json must be a JSON object such as '{"name":"value"}', not '{"a":1} x', which is not JSON (invalid character 'x' after top-level value)`},
		{"--arg without =", toolArgs{kv: []string{"flag"}}, nil, "", `--arg "flag": write key=value`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.in.build(c.schema)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("build = %s, %v; want the error %s", got, err, c.err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("build = %s, %v; want %s", got, err, c.want)
			}
		})
	}
	// The CLI reports it before it starts anything.
	if _, _, err := runCLI(t, "call", "x__y", "--json", "null", "--arg", "a=1"); err == nil || !strings.Contains(err.Error(), "--json") {
		t.Fatalf("call --json null: err = %v", err)
	}
}

// A gateway on the built-in default has no file to reload: SIGHUP is
// logged, and must not end it as an unhandled SIGHUP would.
func TestSIGHUPWithoutConfig(t *testing.T) {
	keep := make(chan os.Signal, 1) // this test process must not die either
	signal.Notify(keep, syscall.SIGHUP)
	defer signal.Stop(keep)
	var mu sync.Mutex
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchConfig(ctx, "", func() (*config.Config, error) { t.Error("load called"); return nil, nil }, nil, log)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_ = testenv.Signal(os.Getpid(), syscall.SIGHUP)
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		got := logs.String()
		mu.Unlock()
		if strings.Contains(got, "nothing to reload") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line for SIGHUP: %q", got)
		}
	}
	cancel()
	<-done
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The run command's flags outlive a reload: --disclosure progressive stays
// the default endpoint's mode after the file changes. The file is given as
// ~/skillgate.yaml, as a desktop client passes it (no shell expands it):
// the change is still seen.
func TestRunFlagsSurviveReload(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "skillgate.yaml")
	if err := os.WriteFile(cfgPath, []byte("servers: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	cmd := exec.Command(buildSkillgate(t), "run", "-c", "~/skillgate.yaml", "--disclosure", "progressive", "--listen", addr)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.Start(t, cmd)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if err := p.WaitTCP(addr, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	mode := func() string {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var st struct {
			Endpoints []struct {
				Endpoint, Mode string
			} `json:"endpoints"`
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("/stats: %s", b)
		}
		for _, e := range st.Endpoints {
			if e.Endpoint == "/mcp" {
				return e.Mode
			}
		}
		t.Fatalf("/stats has no /mcp: %s", b)
		return ""
	}
	if m := mode(); m != "progressive" {
		t.Fatalf("mode before the reload = %q", m)
	}
	if err := os.WriteFile(cfgPath, []byte("servers: {}\nlimits: {request_timeout: 30s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(20 * time.Second)
	for reloaded := false; !reloaded; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the gateway ended")
			}
			reloaded = strings.Contains(l, "config reloaded")
		case <-timeout:
			t.Fatal("no reload within 20 s of the edit")
		}
	}
	if m := mode(); m != "progressive" {
		t.Fatalf("mode after the reload = %q; --disclosure progressive was lost", m)
	}
}

// import --merge --write keeps the file's permissions (a config may hold
// tokens), writes through a symlink, and leaves no temporary file.
func TestImportWriteInPlace(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.yaml")
	link := filepath.Join(dir, "skillgate.yaml")
	src := filepath.Join(dir, "claude.json")
	if err := os.WriteFile(real, []byte("# mine\nauth: {tokens: [s3cret]}\nservers: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.yaml", link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(`{"mcpServers":{"memory":{"command":"node","args":["server.js"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "import", src, "--write"); err == nil || !strings.Contains(err.Error(), "--merge") {
		t.Fatalf("--write alone: err = %v", err)
	}
	if _, stderr, err := runCLI(t, "import", src, "--merge", link, "--write"); err != nil {
		t.Fatalf("import: %v\n%s", err, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v, %v", fi.Mode(), err)
	}
	fi, err := os.Stat(real)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, %v; want -rw-------", fi.Mode(), err)
	}
	b, _ := os.ReadFile(real)
	if !strings.Contains(string(b), "# mine") || !strings.Contains(string(b), "memory:") {
		t.Fatalf("merged file:\n%s", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Fatalf("files left in the folder: %v", entries)
	}
}

func TestValidateAndVersion(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("servers: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runCLI(t, "validate", good); err != nil || !strings.Contains(stderr, good+": ok, but it serves nothing") {
		t.Fatalf("validate FILE: %v, %q", err, stderr)
	}
	cmd := newRootCmd()
	var stderr bytes.Buffer
	cmd.SetIn(strings.NewReader("servers: {a: {command: echo}}\n"))
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{"validate", "-"})
	if err := cmd.Execute(); err != nil || stderr.String() != "<stdin>: ok\n" {
		t.Fatalf("validate -: %v, %q", err, stderr.String())
	}
	if _, _, err := runCLI(t, "validate", good, "-c", filepath.Join(dir, "other.yaml")); err == nil || !strings.Contains(err.Error(), "two files") {
		t.Fatalf("validate with two files: err = %v", err)
	}
	if _, _, err := runCLI(t, "call"); err == nil || !strings.Contains(err.Error(), "skillgate call TOOL") {
		t.Fatalf("call without a tool: err = %v", err)
	}
	out, _, err := runCLI(t, "version", "--json")
	var v struct {
		Version string `json:"version"`
		Go      string `json:"go"`
		Max     int    `json:"executor_protocol_max"`
	}
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || v.Version == "" || !strings.HasPrefix(v.Go, "go") || v.Max < 1 {
		t.Fatalf("version --json = %q, %v", out, err)
	}
}

// validate warns of plugin files the gateway would not serve, and still
// passes: the gateway serves the other plugins.
func TestValidateWarnsOfPlugins(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skillgate.yaml":  "servers:\n  mine: {command: echo}\nplugins: {dirs: [./plugins]}\n",
		"plugins/admin":   "#!/bin/sh\n",
		"plugins/mine":    "#!/bin/sh\n",
		"plugins/notexec": "",
	})
	for _, name := range []string{"admin", "mine"} {
		if err := os.Chmod(filepath.Join(dir, "plugins", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, err := runCLI(t, "validate", filepath.Join(dir, "skillgate.yaml"))
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		`warning: plugin ` + filepath.Join(dir, "plugins", "admin") + `: its name "admin" is the namespace of the gateway's own tools`,
		`its name "mine" is taken by the server "mine"`,
		`plugins/notexec: not executable`,
		"skillgate.yaml: ok\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate lacks %q:\n%s", want, stderr)
		}
	}
}

// A pasted mcpServers block with a server the gateway's own tools reserve
// (tools) or a name it refuses imports as a config that validates, with
// the servers renamed and the renames told on stderr; the renamed server
// serves its tools under its new name.
func TestImportRenamesRefusedNames(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	dir := t.TempDir()
	entry, err := json.Marshal(map[string]any{"command": argv[0], "args": argv[1:]})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "claude.json")
	writeFile(t, src, `{"mcpServers": {"tools": `+string(entry)+`, "my server": {"command": "echo"}, "tools-server": {"command": "echo", "disabled": true}}}`)
	bin := buildSkillgate(t)
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return out.String(), errb.String()
	}
	out, stderr := run("import", src)
	for _, want := range []string{
		`claude.json:1:17: tools: renamed to "tools-server-2": "tools" is reserved for the gateway's own tools (tools__*), and tools-server is taken`,
		`my server: renamed to "my-server": a server name is 1-64 letters, digits, _ or -`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "does not validate") {
		t.Errorf("the imported servers do not validate:\n%s", stderr)
	}
	cfg := filepath.Join(dir, "skillgate.yaml")
	writeFile(t, cfg, out)
	if _, stderr := run("validate", cfg); !strings.HasSuffix(stderr, ": ok\n") {
		t.Errorf("validate: %s", stderr)
	}
	// Merged into a file, too.
	merged := filepath.Join(dir, "merged.yaml")
	writeFile(t, merged, "# mine\nservers: {}\n")
	run("import", src, "--merge", merged, "--write")
	if _, stderr := run("validate", merged); !strings.HasSuffix(stderr, ": ok\n") {
		t.Errorf("validate the merged file: %s", stderr)
	}
	list, _ := run("tools", "list", "--json", "-c", cfg)
	if !strings.Contains(list, `"name": "tools-server-2__echo"`) {
		t.Errorf("tools list lacks tools-server-2__echo:\n%s", list)
	}
}
