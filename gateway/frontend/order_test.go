package frontend

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// progressRouter reports n progress steps and a log message, then answers.
type progressRouter struct{ n int }

func (r progressRouter) Call(_ context.Context, _ *catalog.Item, _ string, _ json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	for i := 1; i <= r.n; i++ {
		if err := call.Progress(sdk.Progress{Progress: float64(i), Total: float64(r.n)}); err != nil {
			return nil, err
		}
	}
	if err := call.Notify(sdk.Notification{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"last"}`)}); err != nil {
		return nil, err
	}
	return json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`), nil
}

// TestNotificationsBeforeResultAreNeverLost makes many calls whose last
// notifications come right before the result, and counts what arrives on
// the POST's SSE stream: a gateway must not lose the last one.
func TestNotificationsBeforeResultAreNeverLost(t *testing.T) {
	const steps, calls = 3, 200
	fe := New(progressRouter{n: steps}, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools: []json.RawMessage{json.RawMessage(`{"name":"work","inputSchema":{"type":"object"}}`)},
	}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()

	post := func(session, body string) *http.Response {
		t.Helper()
		resp := send(t, http.MethodPost, ts.URL, session, body)
		if resp == nil {
			t.FailNow()
		}
		return resp
	}
	resp := post("", initBody)
	session := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	if session == "" {
		t.Fatal("no session id from initialize")
	}
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	lost := 0
	for i := range calls {
		resp := post(session, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"s__work","arguments":{},"_meta":{"progressToken":"p%d"}}}`, i+10, i))
		progress, logs, result := 0, 0, false
		var raw strings.Builder
		sc := bufio.NewScanner(io.TeeReader(resp.Body, &raw))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			switch {
			case strings.Contains(line, `"notifications/progress"`):
				if !strings.Contains(line, fmt.Sprintf(`"progressToken":"p%d"`, i)) {
					t.Fatalf("progress under the wrong token: %s", line)
				}
				progress++
			case strings.Contains(line, `"notifications/message"`):
				logs++
			case strings.Contains(line, `"result"`):
				result = true
			}
		}
		resp.Body.Close()
		if !result {
			t.Fatalf("call %d: no result; status %d, body %q", i, resp.StatusCode, raw.String())
		}
		if progress != steps || logs != 1 {
			lost++
			t.Errorf("call %d: got %d progress and %d log notifications, want %d and 1", i, progress, logs, steps)
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d calls lost notifications", lost, calls)
	}
}
