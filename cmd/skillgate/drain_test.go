//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// stopMessage is what a request the gateway cut when it stopped is
// answered with.
const stopMessage = "the gateway is stopping; send the request again"

// drainGateway runs the binary on a config of server-everything, with
// more (YAML appended to the config: limits, other servers), and waits
// until /readyz?min=serving (or, with ready, /readyz) says 200. It
// returns the process and the gateway's base URL.
func drainGateway(t *testing.T, bin, more string, ready bool) (*testenv.Process, string) {
	t.Helper()
	argv := testenv.NodeServer(t, "server-everything")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "skillgate.yaml")
	writeFile(t, cfg, "servers:\n  everything:\n    command: "+argv[0]+"\n    args: ["+strings.Join(argv[1:], ", ")+"]\n"+more)
	port := testenv.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	p := testenv.Start(t, exec.Command(bin, "-c", cfg, "run", "--listen", "127.0.0.1:"+strconv.Itoa(port)))
	probe := base + "/readyz"
	if !ready {
		probe += "?min=serving"
	}
	waitProbe(t, p, probe, http.StatusOK, "")
	return p, base
}

// waitProbe waits until url answers code with a body containing want.
func waitProbe(t *testing.T, p *testenv.Process, url string, code int, want string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
			if resp.StatusCode == code && strings.Contains(string(body), want) {
				return
			}
		} else {
			last = err.Error()
		}
		select {
		case <-p.Done():
			t.Fatalf("the gateway exited (%v) before %s answered %d with %q; last: %s", p.Err(), url, code, want, last)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered %d with %q in 60 s; last: %s", url, code, want, last)
		}
	}
}

// drainClient bounds each request, its body read included, so that a
// call the gateway never answers fails the test instead of hanging it.
var drainClient = &http.Client{Timeout: 90 * time.Second}

// mcpPost posts a JSON-RPC message to base's /mcp with headers.
func mcpPost(t *testing.T, base, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := drainClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	return resp
}

// legacySession initializes a 2025-11-25 session and returns its id.
func legacySession(t *testing.T, base string) string {
	t.Helper()
	resp := mcpPost(t, base, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"drain-test","version":"1"}}}`, nil)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, sid)
	}
	resp = mcpPost(t, base, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	resp.Body.Close()
	return sid
}

// callTool posts a tools/call of tool with args and a progress token: in
// the session sid, or with sid "" as a 2026-07-28 request whose client
// declares caps (a JSON object; one that names elicitation makes it a
// call that may ask its client for input, which runs on a context of its
// own).
func callTool(t *testing.T, base, sid, caps, tool, args string) *http.Response {
	t.Helper()
	meta := `"progressToken":"p1"`
	headers := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	if sid == "" {
		meta += `,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"drain-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps
		headers = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
	}
	return mcpPost(t, base, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{%s}}}`, tool, args, meta), headers)
}

// longCall starts a 10-minute call of server-everything's long-running
// operation and returns its body once a progress notification came: the
// call runs in the upstream.
func longCall(t *testing.T, base, sid, caps string) *bufio.Reader {
	t.Helper()
	resp := callTool(t, base, sid, caps, "everything__trigger-long-running-operation", `{"duration":600,"steps":600}`)
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("long call (session %q): %s %s", sid, resp.Status, body)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if strings.Contains(line, "notifications/progress") {
			return br
		}
		if err != nil {
			t.Fatalf("long call (session %q) ended before any progress: %v", sid, err)
		}
	}
}

// cutAnswer reads the rest of a cut call's body and returns the JSON-RPC
// error it ends with.
func cutAnswer(t *testing.T, what string, br *bufio.Reader) {
	t.Helper()
	rest, _ := io.ReadAll(br)
	for _, line := range bytes.Split(rest, []byte("\n")) {
		line = bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data: "))
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &msg) == nil && string(msg.ID) == "7" && msg.Error != nil {
			if msg.Error.Code != -32603 || msg.Error.Message != stopMessage {
				t.Errorf("%s: cut call answered %d %q; want -32603 %q", what, msg.Error.Code, msg.Error.Message, stopMessage)
			}
			return
		}
	}
	t.Errorf("%s: the call cut by the stop got no JSON-RPC error; its body ended with %q", what, rest[max(0, len(rest)-400):])
}

// On SIGTERM a gateway with limits.shutdown_delay first drains: /readyz
// answers 503 with "draining": true (so does ?min=serving) while
// /healthz stays 200 and a new request is still served; a second SIGTERM
// ends the delay, and the gateway exits 0.
func TestShutdownDelayDraining(t *testing.T) {
	bin := buildSkillgate(t)
	p, base := drainGateway(t, bin, "limits: {shutdown_delay: 10m, drain_timeout: 10m}\n", true)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitProbe(t, p, base+"/readyz", http.StatusServiceUnavailable, `"draining":true`)
	waitProbe(t, p, base+"/readyz?min=serving", http.StatusServiceUnavailable, `"draining":true`)
	waitProbe(t, p, base+"/healthz", http.StatusOK, "")
	resp := callTool(t, base, "", "{}", "everything__echo", `{"message":"still here"}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Echo: still here") {
		t.Errorf("a call while draining: %s %s; want it served", resp.Status, body)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(2 * time.Minute):
		t.Fatal("a second SIGTERM during limits.shutdown_delay (10m) did not end the gateway")
	}
	if err := p.Err(); err != nil {
		t.Errorf("exit after two SIGTERMs: %v; want status 0", err)
	}
}

// A second SIGTERM while requests drain (limits.drain_timeout 10m) ends
// the drain: the call still running gets a JSON-RPC error asking to send
// it again, and the gateway exits 0.
func TestSecondSignalEndsDrain(t *testing.T) {
	bin := buildSkillgate(t)
	p, base := drainGateway(t, bin, "limits: {drain_timeout: 10m}\n", true)
	br := longCall(t, base, "", "{}")
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitOutput("msg=stopping", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cutAnswer(t, "2026-07-28", br)
	select {
	case <-p.Done():
	case <-time.After(time.Minute):
		t.Fatal("a second SIGTERM during the drain (limits.drain_timeout 10m) did not end the gateway")
	}
	if err := p.Err(); err != nil {
		t.Errorf("exit after two SIGTERMs: %v; want status 0", err)
	}
}

// Calls still running when limits.drain_timeout ends get a JSON-RPC error
// that asks to send them again, in both eras, before their connections
// close; the warning says how many and which.
func TestDrainTimeoutAnswersCutCalls(t *testing.T) {
	bin := buildSkillgate(t)
	p, base := drainGateway(t, bin, "limits: {drain_timeout: 1s}\n", true)
	legacy := longCall(t, base, legacySession(t, base), "")
	modern := longCall(t, base, "", "{}")
	asking := longCall(t, base, "", `{"elicitation":{}}`)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cutAnswer(t, "2025-11-25 session", legacy)
	cutAnswer(t, "2026-07-28", modern)
	cutAnswer(t, "2026-07-28 with elicitation", asking)
	waitExit(t, p)
	if err := p.Err(); err != nil {
		t.Errorf("exit after SIGTERM: %v; want status 0", err)
	}
	out := string(p.Output())
	i := strings.Index(out, "requests still running after limits.drain_timeout")
	if i < 0 {
		t.Fatalf("no warning about the requests cut:\n%s", out)
	}
	warn, _, _ := strings.Cut(out[i:], "\n")
	if !strings.Contains(warn, "cut=3") || strings.Count(warn, "everything__trigger-long-running-operation") != 3 || !strings.Contains(warn, "(session c") {
		t.Errorf("the warning does not say that 3 calls (one of a session) of everything__trigger-long-running-operation were cut: %s", warn)
	}
}

// A SIGTERM right after the start, while servers load, is a routine stop
// (a rolling restart): it logs no ERROR.
func TestEarlyStopLogsNoError(t *testing.T) {
	bin := buildSkillgate(t)
	argv := testenv.NodeServer(t, "server-everything")
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	server := "    command: " + argv[0] + "\n    args: [" + strings.Join(argv[1:], ", ") + "]\n"
	writeFile(t, cfg, "servers:\n  one:\n"+server+"  two:\n"+server)
	for i := range 3 {
		addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		p := testenv.Start(t, exec.Command(bin, "-c", cfg, "run", "--listen", addr))
		if err := p.WaitOutput("serving MCP", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		waitExit(t, p)
		if err := p.Err(); err != nil {
			t.Errorf("stop %d: exit %v; want status 0", i, err)
		}
		for _, line := range strings.Split(string(p.Output()), "\n") {
			if strings.Contains(line, "level=ERROR") {
				t.Errorf("stop %d: an ERROR record for a SIGTERM right after the start: %s", i, line)
			}
		}
	}
}

// /readyz?min=serving answers 200 once the gateway serves clients, even
// with a server that failed, which keeps /readyz at 503.
func TestReadyzMinServing(t *testing.T) {
	bin := buildSkillgate(t)
	p, base := drainGateway(t, bin, "  broken:\n    command: sh\n    args: [\"-c\", \"exit 3\"]\n", false)
	waitProbe(t, p, base+"/readyz", http.StatusServiceUnavailable, `"starting":false`)
	waitProbe(t, p, base+"/readyz?min=serving", http.StatusOK, `"serving":true`)
	waitProbe(t, p, base+"/readyz?min=nonsense", http.StatusBadRequest, "min=serving")
}
