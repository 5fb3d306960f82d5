package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/hostside"
)

// A bad SKILLGATE_EXECUTOR_PROTOCOL stops run before anything starts, and
// says which values work.
func TestExecutorProtocolEnv(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int
		err   string
	}{
		{"", 0, ""},
		{"2", 2, ""},
		{"1", 1, ""},
		{"0", 0, "from 1 to"},
		{"9", 0, "from 1 to"},
		{"two", 0, `SKILLGATE_EXECUTOR_PROTOCOL="two"`},
	} {
		t.Setenv("SKILLGATE_EXECUTOR_PROTOCOL", tc.value)
		got, err := executorProtocol()
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("%q: %d, %v; want %d", tc.value, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: err %v, want one mentioning %q", tc.value, err, tc.err)
		}
		if _, _, err := runCLI(t, "run", "--listen", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "SKILLGATE_EXECUTOR_PROTOCOL") {
			t.Errorf("run with %q: %v, want the variable's error", tc.value, err)
		}
	}
}

// servers --url shows a running gateway's servers, then its executor
// processes with their protocol and calls channel; --json keeps printing
// the servers alone.
func TestServersShowsExecutors(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"ready":true,"sources":[{"name":"everything","executor":"mcp","state":"ready","pid":7,"restarts":0,"tools":16}],`+
			`"executors":[{"name":"mcp","state":"running","pid":42,"protocol":3,"calls":"socket","restarts":1}]}`)
	}))
	defer ts.Close()
	out, _, err := runCLI(t, "servers", "--url", ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || lines[2] != "" || !strings.HasPrefix(lines[3], "EXECUTOR") || strings.Join(strings.Fields(lines[4]), " ") != "mcp running 42 3 socket 1" {
		t.Fatalf("servers output:\n%s", out)
	}
	out, _, err = runCLI(t, "servers", "--url", ts.URL, "--json")
	if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "[") || strings.Contains(out, "socket") {
		t.Fatalf("servers --json = %s, %v; want the servers array alone", out, err)
	}
}

// A built-in executor ends on SIGTERM, stopping the upstreams it started,
// even with no gateway at the other end of its stdin; it ignores SIGINT,
// which the gateway handles for its plugins.
func TestPluginServeEndsOnSIGTERM(t *testing.T) {
	cmd := exec.Command(buildSkillgate(t), "plugin", "serve", "mcp")
	cmd.Env = append(os.Environ(), hostside.Handshake().MagicCookieKey+"="+hostside.Handshake().MagicCookieValue,
		"PLUGIN_PROTOCOL_VERSIONS="+strconv.Itoa(sdk.ProtocolVersion), "PLUGIN_MIN_PORT=0", "PLUGIN_MAX_PORT=0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.Start(t, cmd)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "|grpc") {
		t.Fatalf("no go-plugin handshake: %q, %v", line, err)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.Done():
		t.Fatalf("the executor ended on SIGINT: %v", p.Err())
	case <-time.After(300 * time.Millisecond):
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the executor still runs 10 s after SIGTERM")
	}
}

// buildSkillgate builds the binary into a temporary directory, for tests
// that need it as a real process.
func buildSkillgate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "skillgate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build skillgate: %v\n%s", err, out)
	}
	return bin
}
