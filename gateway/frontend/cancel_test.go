package frontend

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// blockRouter blocks every call until its context ends and reports that.
type blockRouter struct{ ended chan error }

func (b blockRouter) Call(ctx context.Context, _ *catalog.Item, _ string, _ json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
	<-ctx.Done()
	b.ended <- ctx.Err()
	return nil, ctx.Err()
}

// TestCancelledReachesTheSource: notifications/cancelled from the client
// cancels the call at the source, whichever path the call took.
func TestCancelledReachesTheSource(t *testing.T) {
	for _, caps := range []string{`{}`, `{"sampling":{}}`} {
		t.Run("capabilities "+caps, func(t *testing.T) {
			br := blockRouter{ended: make(chan error, 1)}
			fe := New(br, Options{})
			fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
				Tools: []json.RawMessage{json.RawMessage(`{"name":"wait","inputSchema":{"type":"object"}}`)},
			}}}, catalog.Options{}))
			ts := httptest.NewServer(fe.Handler())
			defer ts.Close()
			defer ts.CloseClientConnections() // a call left hanging must not hang Close
			post := func(session, body string) *http.Response { return send(t, http.MethodPost, ts.URL, session, body) }
			resp := post("", strings.Replace(initBody, `"capabilities":{}`, `"capabilities":`+caps, 1))
			session := resp.Header.Get("Mcp-Session-Id")
			resp.Body.Close()
			post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

			answered := make(chan string, 1)
			go func() {
				resp := post(session, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"s__wait","arguments":{}}}`)
				if resp == nil {
					answered <- ""
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answered <- string(b)
			}()
			time.Sleep(100 * time.Millisecond) // let the call reach the router
			post(session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42,"reason":"user"}}`).Body.Close()
			select {
			case err := <-br.ended:
				if err != context.Canceled {
					t.Fatalf("the source saw %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call was not cancelled at the source")
			}
			select {
			case <-answered:
			case <-time.After(10 * time.Second):
				t.Fatal("the cancelled request never ended")
			}
		})
	}
}
