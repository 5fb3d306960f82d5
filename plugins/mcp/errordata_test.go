package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// errorDataJSON is the data of the error errorServer answers tools/call
// with: what decoding it into an any would change (1.50, a number beyond
// float64, key order) must reach the caller as it is.
const errorDataJSON = `{"n":1.50,"big":12345678901234567890,"z":1,"a":[2]}`

// errorServer is a streamable HTTP server (2025-11-25) written by hand, so
// that every byte of its answers is the test's: its one tool fails with a
// JSON-RPC error whose data is errorDataJSON, answered as plain JSON or,
// with sse, as an SSE stream.
func errorServer(sse bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 || m.Method == "" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var answer string
		switch m.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			answer = `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"errors","version":"0"}}`
		case "tools/list":
			answer = `"result":{"tools":[{"name":"fail","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			answer = `"error":{"code":-32050,"message":"failed on purpose","data":` + errorDataJSON + `}`
		default:
			answer = `"error":{"code":-32601,"message":"no ` + m.Method + `"}`
		}
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, m.ID, answer)
		if sse && m.Method == "tools/call" {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, msg)
	})
}

// TestHTTPErrorData: an HTTP upstream's JSON-RPC error reaches the caller
// with its data as the upstream wrote it, whether it came as plain JSON or
// on an SSE stream.
func TestHTTPErrorData(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			ts := httptest.NewServer(errorServer(sse))
			t.Cleanup(ts.Close)
			h := newHarness(t)
			h.load("errs", map[string]any{"url": ts.URL, "protocol_version": "2025-11-25"})
			_, err := h.call("errs", "fail", nil, nil)
			var re *sdk.RPCError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a JSON-RPC error", err)
			}
			if re.Code != -32050 || re.Message != "failed on purpose" || string(re.Data) != errorDataJSON {
				t.Fatalf("error %d %q with data %s, want -32050 \"failed on purpose\" with data %s", re.Code, re.Message, re.Data, errorDataJSON)
			}
		})
	}
}
