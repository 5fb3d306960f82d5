package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// tools list tells of each server that is not ready once, after the list:
// the gateway's log line about the same failure is left out.
func TestToolsListReportsFailureOnce(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "tools", "broken_tool")
	if err := os.MkdirAll(tool, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tool, "tool.yaml"), "name: broken_tool\ndescription: d\nruntime: bash\nentry: main.sh\nargs: [a\n")
	writeFile(t, filepath.Join(tool, "main.sh"), "echo hi\n")
	cfg := filepath.Join(dir, "skillgate.yaml")
	writeFile(t, cfg, `servers:
  broken:
    command: sh
    args: ["-c", "echo cannot open the database >&2; exit 3"]
tools: {dirs: [./tools]}
`)
	bin := buildSkillgate(t)
	stderr := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-c", cfg}, args...)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return errb.String()
	}
	for _, args := range [][]string{{"tools", "list"}, {"tools", "list", "--json"}} {
		got := stderr(args...)
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 2 ||
			!strings.HasPrefix(lines[0], `server broken failed: `) || !strings.Contains(lines[0], "cannot open the database") ||
			!strings.HasPrefix(lines[1], "tool folder tool:broken_tool is invalid: ") || !strings.Contains(lines[1], "tool.yaml:5:7: invalid YAML") {
			t.Errorf("%v: stderr is not one line per source, named by its kind:\n%s", args, got)
		}
	}
	// Asked for, the log has the failures too.
	if got := stderr("tools", "list", "--log-level", "warn"); !strings.Contains(got, `msg="source failed to load" source=broken`) {
		t.Errorf("--log-level warn: no log line for the failure:\n%s", got)
	}
}

// An error a TypeScript SDK server returns shows its code once: the SDK
// writes it into the message as well ("MCP error -32602: ...").
func TestCallShowsErrorCodeOnce(t *testing.T) {
	modules := testenv.NPMDir(t)
	testenv.Require(t, "npm package @modelcontextprotocol/sdk", isDir(filepath.Join(modules, "@modelcontextprotocol", "sdk")),
		"run scripts/test-deps.sh")
	script, err := filepath.Abs(filepath.Join("testdata", "invalid_params.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, `servers:
  strict:
    command: `+testenv.Node22(t)+`
    args: [`+script+`]
    env: {NODE_PATH: `+modules+`}
`)
	cmd := exec.Command(buildSkillgate(t), "call", "strict__add", "--arg", "a=x", "-c", cfg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, stderr.String())
	}
	if got, want := stderr.String(), "skillgate: rpc error -32602: a must be a number\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// everythingConfig writes a config with the reference server (everything),
// a server that fails at once (broken, with a last error longer than a
// table cuts) and extra, and returns its path.
func everythingConfig(t *testing.T, extra string) string {
	t.Helper()
	argv := testenv.NodeServer(t, "server-everything")
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, `servers:
  everything:
    command: `+argv[0]+`
    args: [`+strings.Join(argv[1:], ", ")+`]
  broken:
    command: sh
    args: ["-c", "echo cannot open the database at /var/lib/app/data/main.sqlite: permission denied >&2; exit 3"]
`+extra)
	return cfg
}

// runBin runs the built skillgate and returns its stdout, stderr and exit
// status.
func runBin(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// servers and profiles, run from the config, print their data on stdout
// and on stderr only what the user needs: not the gateway's log, unless
// --log-level asks for it. A last error names its server once, and is
// whole when the table goes to a pipe.
func TestReadOnlyCommandsOutput(t *testing.T) {
	bin := buildSkillgate(t)
	cfg := everythingConfig(t, "")
	const cause = "initialize: source unavailable: upstream exited (exit status 3); last stderr: cannot open the database at /var/lib/app/data/main.sqlite: permission denied"

	out, stderr, code := runBin(t, bin, "servers", "-c", cfg)
	if code != 3 || stderr != "" {
		t.Errorf("servers: exit %d, stderr %q; want 3 and nothing on stderr", code, stderr)
	}
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "broken ") {
			row = l
		}
	}
	if !strings.HasSuffix(row, "  "+cause) {
		t.Errorf("servers: the row of broken does not end with its whole last error, named once:\n%s\nwant the end %q", out, cause)
	}
	if _, stderr, _ := runBin(t, bin, "servers", "-c", cfg, "--log-level", "warn"); !strings.Contains(stderr, `msg="source failed to load" source=broken`) {
		t.Errorf("servers --log-level warn: no log line for the failure:\n%s", stderr)
	}

	out, stderr, code = runBin(t, bin, "profiles", "-c", cfg)
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "ENDPOINT") {
		t.Errorf("profiles: exit %d, stdout:\n%s", code, out)
	}
	if want := "server broken failed: " + cause + "\n"; stderr != want {
		t.Errorf("profiles: stderr\n%q\nwant\n%q", stderr, want)
	}

	// tools list keeps the gateway's other warnings.
	_, stderr, _ = runBin(t, bin, "tools", "list", "-c", cfg)
	if want := "server broken failed: " + cause + "\n"; !strings.HasPrefix(stderr, want) || strings.Contains(stderr, `source \"broken\"`) {
		t.Errorf("tools list: stderr\n%q\nwant it to start with\n%q", stderr, want)
	}
}

// On a terminal, servers cuts a long last error and says how to see it
// whole; --wide keeps it whole there too.
func TestServersCutsOnATerminal(t *testing.T) {
	long := strings.Repeat("x", 100)
	c := &cutter{width: maxErrorWidth}
	if got := c.cut(long); len([]rune(got)) != maxErrorWidth || c.cuts != 1 {
		t.Errorf("cut on a terminal = %q (%d cuts)", got, c.cuts)
	}
	if got := c.cut("short\nerror"); got != "short error" || c.cuts != 1 {
		t.Errorf("cut of a short error = %q (%d cuts)", got, c.cuts)
	}
	w := &cutter{}
	if got := w.cut(long + "\n  more"); got != long+" more" || w.cuts != 0 {
		t.Errorf("cut in full = %q (%d cuts)", got, w.cuts)
	}
	if c := errorCutter(&bytes.Buffer{}, false); c.width != 0 {
		t.Errorf("a table written to a buffer is cut at %d", c.width)
	}
}

// hangingServer accepts connections and never answers; each accepted
// connection is sent on the channel it returns.
func hangingServer(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 100)
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), accepted
}

// A command interrupted (Ctrl-C: SIGINT to its process group) while it
// waits for a server, or while a tool runs, exits 130 with one short line,
// not with the errors of what the interruption stopped; SIGTERM exits 143.
func TestInterruptedCommandExitsQuietly(t *testing.T) {
	bin := buildSkillgate(t)
	addr, accepted := hangingServer(t)
	cfg := everythingConfig(t, "  remote: {url: http://"+addr+"/mcp}\n")
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
		wait string // output to wait for; "": a connection to the hanging server
		want int
	}{
		{args: []string{"servers", "-c", cfg}, sig: syscall.SIGINT, want: 130},
		{args: []string{"servers", "-c", cfg}, sig: syscall.SIGTERM, want: 143},
		{args: []string{"tools", "list", "-c", cfg}, sig: syscall.SIGINT, want: 130},
		{args: []string{"profiles", "-c", cfg}, sig: syscall.SIGINT, want: 130},
		{args: []string{"call", "remote__x", "-c", cfg}, sig: syscall.SIGINT, want: 130},
		{args: []string{"call", "x", "--url", addr}, sig: syscall.SIGINT, want: 130},
		{args: []string{"tools", "list", "--url", addr}, sig: syscall.SIGINT, want: 130},
		{args: []string{"call", "everything__trigger-long-running-operation", "--arg", "duration=120", "--arg", "steps=120", "-c",
			everythingConfig(t, "")}, sig: syscall.SIGINT, wait: "progress 1/120", want: 130},
	} {
		t.Run(strings.Join(tc.args[:2], " ")+" "+tc.sig.String(), func(t *testing.T) {
			for len(accepted) > 0 {
				<-accepted
			}
			p := testenv.Start(t, exec.Command(bin, tc.args...))
			if tc.wait != "" {
				if err := p.WaitOutput(tc.wait, 60*time.Second); err != nil {
					t.Fatal(err)
				}
			} else {
				select {
				case <-accepted:
				case <-p.Done():
					t.Fatalf("ended before it reached the server: %v\n%s", p.Err(), p.Output())
				case <-time.After(60 * time.Second):
					t.Fatalf("no connection to the hanging server in 60 s\n%s", p.Output())
				}
			}
			if err := p.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.Done():
			case <-time.After(60 * time.Second):
				t.Fatalf("still running 60 s after %v\n%s", tc.sig, p.Output())
			}
			var exit *exec.ExitError
			if !errors.As(p.Err(), &exit) || exit.ExitCode() != tc.want {
				t.Errorf("exit: %v, want status %d", p.Err(), tc.want)
			}
			out := string(p.Output())
			if tc.wait != "" {
				out = out[strings.LastIndex(out, tc.wait[:len("progress")]):]
				out = out[strings.Index(out, "\n")+1:]
			}
			if out != "skillgate: interrupted\n" {
				t.Errorf("output after the signal:\n%s\nwant only skillgate: interrupted", out)
			}
		})
	}
}

// Every command that can use a running gateway takes the same --url and
// --token, and reads --url alike: a base URL, with or without a scheme, or
// one of its MCP endpoints.
func TestRemoteFlagsAgree(t *testing.T) {
	root := newRootCmd()
	var usage string
	for _, path := range [][]string{{"call"}, {"servers"}, {"profiles"}, {"tools", "list"}, {"pipeline", "runs"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"url", "token"} {
			f := cmd.Flags().Lookup(name)
			switch {
			case f == nil:
				t.Errorf("%s has no --%s", cmd.CommandPath(), name)
			case name == "url" && usage == "":
				usage = f.Usage
			case name == "url" && f.Usage != usage:
				t.Errorf("%s --url: %q; the others say %q", cmd.CommandPath(), f.Usage, usage)
			}
		}
	}
	for in, want := range map[string]string{
		"127.0.0.1:8811":                       "http://127.0.0.1:8811",
		"http://127.0.0.1:8811/":               "http://127.0.0.1:8811",
		"http://127.0.0.1:8811/mcp":            "http://127.0.0.1:8811",
		"http://127.0.0.1:8811/mcp/p/research": "http://127.0.0.1:8811",
		"https://gw.example.com/team/mcp":      "https://gw.example.com/team",
		"http://mcp/mcp":                       "http://mcp",
	} {
		if got := (&remote{url: in}).base(); got != want {
			t.Errorf("base of %s = %s, want %s", in, got, want)
		}
	}
}

// tools list, profiles and servers with --url report on a running
// gateway: the tools are the ones tools list finds from the config, and a
// profile's endpoint lists the profile's tools.
func TestToolsListURL(t *testing.T) {
	bin := buildSkillgate(t)
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	cfg := everythingConfig(t, "listen: {http: "+addr+"}\nprofiles:\n  small: {tools: [everything__echo], description: just echo}\n")
	p := testenv.Start(t, exec.Command(bin, "run", "-c", cfg))
	if err := p.WaitTCP(addr, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	// broken keeps /readyz at 503; wait for everything's tools.
	waitEverythingReady(t, bin, addr, p)
	names := func(table string) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(table), "\n")[1:] {
			out = append(out, strings.Fields(l)[0])
		}
		slices.Sort(out)
		return out
	}
	local, _, code := runBin(t, bin, "tools", "list", "-c", cfg)
	remote, stderr, rcode := runBin(t, bin, "tools", "list", "--url", addr)
	if code != 0 || rcode != 0 || !slices.Equal(names(remote), names(local)) {
		t.Errorf("tools list --url: exit %d, tools\n%v\nwant (as from the config, exit %d)\n%v\n%s", rcode, names(remote), code, names(local), stderr)
	}
	if !regexp.MustCompile(`(?m)^everything__echo +everything +- +Echoes back the input string$`).MatchString(remote) {
		t.Errorf("tools list --url has no row for everything__echo:\n%s", remote)
	}
	if !strings.HasPrefix(stderr, "server broken failed: initialize: source unavailable: upstream exited") {
		t.Errorf("tools list --url does not tell of broken:\n%s", stderr)
	}
	small, _, _ := runBin(t, bin, "tools", "list", "--url", "http://"+addr+"/mcp/p/small")
	if got := names(small); !slices.Equal(got, []string{"everything__echo"}) {
		t.Errorf("tools list on the profile's endpoint: %v\n%s", got, small)
	}
	out, _, _ := runBin(t, bin, "tools", "list", "--json", "--url", addr)
	var js struct {
		Tools []struct{ Name, Server string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || len(js.Tools) != len(names(local)) {
		t.Errorf("tools list --json --url: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"profiles"}, {"tools", "list", "--tokens"}} {
		out, stderr, code := runBin(t, bin, append(args, "--url", "http://"+addr+"/mcp/p/small")...)
		if code != 0 || !regexp.MustCompile(`(?m)^ +/mcp/p/small +all +`).MatchString(out) {
			t.Errorf("%v --url: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	if out, stderr, code := runBin(t, bin, "servers", "--url", "http://"+addr+"/mcp/p/small"); code != 3 || !strings.Contains(out, "everything  mcp       ready") {
		t.Errorf("servers --url on a profile's endpoint: exit %d\n%s%s", code, out, stderr)
	}
}

// A config whose file stops loading is reported by `servers --url`: the
// gateway keeps the running one and /readyz says it is stale.
func TestServersURLShowsStaleConfig(t *testing.T) {
	bin := buildSkillgate(t)
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "skillgate.yaml")
	writeFile(t, cfg, "listen: {http: "+addr+"}\ntools: {dirs: [.]}\n")
	p := testenv.Start(t, exec.Command(bin, "run", "-c", cfg))
	if err := p.WaitTCP(addr, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, stderr, _ := runBin(t, bin, "servers", "--url", addr); strings.Contains(stderr, "did not load") {
		t.Fatalf("servers --url tells of a stale config before the file changed:\n%s", stderr)
	}
	writeFile(t, cfg, "listen: {http: "+addr+"}\ntools: {dirs: [.]}\nbogus_key: 1\n")
	for deadline := time.Now().Add(60 * time.Second); ; {
		_, stderr, _ := runBin(t, bin, "servers", "--url", addr)
		if strings.Contains(stderr, "config: "+cfg+" changed but did not load") && strings.Contains(stderr, "bogus_key") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("servers --url does not tell that the config did not load:\n%s\n%s", stderr, p.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A server whose entry names an unset variable fails alone: the commands
// that start the gateway report it as a failed server, while validate
// refuses the file; validate warns of a command it cannot find.
func TestUnsetVariableFailsOneServer(t *testing.T) {
	bin := buildSkillgate(t)
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, `servers:
  needs:
    command: sh
    args: ["-c", "sleep 1"]
    env: {TOKEN: "${SKILLGATE_TEST_SURELY_UNSET}"}
  missing:
    command: mcp-server-surely-not-installed
`)
	out, _, code := runBin(t, bin, "servers", "-c", cfg)
	if code != 3 || !regexp.MustCompile(`(?m)^needs +mcp +failed .*SKILLGATE_TEST_SURELY_UNSET`).MatchString(out) {
		t.Errorf("servers: exit %d, want 3 with needs failed for its variable:\n%s", code, out)
	}
	_, stderr, code := runBin(t, bin, "validate", cfg)
	if code != 1 || !strings.Contains(stderr, "SKILLGATE_TEST_SURELY_UNSET") {
		t.Errorf("validate: exit %d, want 1 naming the variable:\n%s", code, stderr)
	}
	writeFile(t, cfg, "servers:\n  missing:\n    command: mcp-server-surely-not-installed\n")
	_, stderr, code = runBin(t, bin, "validate", cfg)
	if code != 0 || !strings.Contains(stderr, "warning: "+cfg+":3:") || !strings.Contains(stderr, "mcp-server-surely-not-installed") {
		t.Errorf("validate: exit %d, want 0 with a warning at %s:3 for the missing command:\n%s", code, cfg, stderr)
	}
}

// validate checks the config's skills too: a broken SKILL.md makes it fail
// with the file and line, and a good one is ok.
func TestValidateChecksSkills(t *testing.T) {
	bin := buildSkillgate(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "skillgate.yaml")
	writeFile(t, cfg, "skills: {dirs: [./skills]}\n")
	writeFiles(t, dir, map[string]string{"skills/good/SKILL.md": "---\nname: good\ndescription: Says hello when asked to greet someone.\n---\n# Good\n"})
	if _, stderr, code := runBin(t, bin, "validate", cfg); code != 0 || !strings.Contains(stderr, ": ok") {
		t.Fatalf("validate of good skills: exit %d\n%s", code, stderr)
	}
	writeFiles(t, dir, map[string]string{"skills/bad/SKILL.md": "---\nname: bad\n---\n# Bad\n"})
	_, stderr, code := runBin(t, bin, "validate", cfg)
	if code != 1 || !strings.Contains(stderr, "SKILL.md") || !strings.Contains(stderr, "description") || !strings.Contains(stderr, "1 problem in its skills") {
		t.Errorf("validate of a skill without a description: exit %d, want 1 naming its SKILL.md and the field\n%s", code, stderr)
	}
}

// A server's start_timeout reaches the mcp executor: a server that never
// answers initialize fails after it, with what to check.
func TestStartTimeoutFromConfig(t *testing.T) {
	bin := buildSkillgate(t)
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, "servers:\n  silent:\n    command: sleep\n    args: [\"100000\"]\n    start_timeout: 1s\n")
	out, _, code := runBin(t, bin, "servers", "-c", cfg)
	if code != 3 || !strings.Contains(out, "within 1s (start_timeout)") {
		t.Errorf("servers: exit %d, want 3 with silent failed after its 1s start_timeout:\n%s", code, out)
	}
}

// tools list waits for a slow server as long as its start takes, and does
// not print the gateway's warning to clients that limits.start_wait passed
// (it serves none): its own output tells which servers were not ready.
func TestToolsListSlowServer(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, `limits: {start_wait: 100ms}
servers:
  slow:
    command: sh
    args: ["-c", "sleep 1; exec \"$0\" \"$@\"", `+strings.Join(argv, ", ")+`]
  hung:
    command: sh
    args: ["-c", "exec sleep 60"]
    start_timeout: 2s
`)
	bin := buildSkillgate(t)
	out, stderr, code := runBin(t, bin, "tools", "list", "-c", cfg)
	if code != 0 || !strings.Contains(out, "slow__echo") {
		t.Fatalf("tools list: exit %d, stdout:\n%s\nstderr:\n%s\nwant 0 and the slow server's tools", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "server hung ") || !strings.Contains(lines[0], "(start_timeout)") || strings.Contains(stderr, "start_wait") {
		t.Errorf("tools list stderr is not one line for the server that was not ready:\n%s", stderr)
	}
}

// waitEverythingReady waits until `skillgate servers --url addr` shows the
// server named everything ready (/readyz may stay 503 for another server).
func waitEverythingReady(t *testing.T, bin, addr string, p *testenv.Process) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; {
		out, _, _ := runBin(t, bin, "servers", "--url", addr)
		if strings.Contains(out, "everything  mcp       ready") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("everything is not ready after 60 s:\n%s\n%s", out, p.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestLogFormatJSON: --log-format json (or $SKILLGATE_LOG_FORMAT) writes
// each log record as one JSON object a line, for a log shipper, the
// records of the executor processes included; stdout keeps the data.
func TestLogFormatJSON(t *testing.T) {
	bin := buildSkillgate(t)
	cfg := everythingConfig(t, "")
	for _, args := range [][]string{
		{"servers", "-c", cfg, "--log-level", "debug", "--log-format", "json"},
		{"servers", "-c", cfg, "--log-level", "debug"}, // $SKILLGATE_LOG_FORMAT below
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "SKILLGATE_LOG_FORMAT=json")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run() // exit 1: the broken server
		if !strings.Contains(out.String(), "everything") {
			t.Errorf("%v: stdout lacks the servers table:\n%s", args, out.String())
		}
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		records, failed := 0, false
		for _, line := range lines {
			var rec struct {
				Level, Msg string
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level == "" || rec.Msg == "" {
				if strings.HasPrefix(line, "{") || strings.Contains(line, "level=") {
					t.Errorf("%v: a log line that is not a JSON record: %q", args, line)
				}
				continue
			}
			records++
			failed = failed || strings.Contains(line, "permission denied")
		}
		if records < 3 || !failed {
			t.Errorf("%v: %d JSON records (want several, one with the broken server's error):\n%s", args, records, errb.String())
		}
	}
}
