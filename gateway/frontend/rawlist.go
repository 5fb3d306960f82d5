package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// tools/list over HTTP is answered with the catalog snapshot's pre-encoded
// bytes: the upstreams' definitions exactly as they sent them (names
// changed), encoded once per snapshot instead of once per request.
//
// mcp-go still handles the request, so sessions, protocol versions and the
// result's era-specific members stay its business; the request's context
// asks rawListFilter to hand it an empty list, and the response's
// `"tools":[]` is replaced by the snapshot's array.

type rawListKey struct{}

// rawListFilter empties the list mcp-go builds for a request whose tools
// the front end splices in itself.
func rawListFilter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if ctx.Value(rawListKey{}) != nil {
		return nil
	}
	return tools
}

// isFullToolsList reports whether body is a single tools/list request
// without a cursor.
func isFullToolsList(body []byte) bool {
	if !bytes.Contains(body, []byte(`"tools/list"`)) {
		return false
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			Cursor *string `json:"cursor"`
		} `json:"params"`
	}
	return json.Unmarshal(body, &req) == nil && req.Method == string(mcp.MethodToolsList) && req.Params.Cursor == nil
}

var emptyTools = []byte(`"tools":[]`)

// serveToolsList runs next with the raw-list marker and splices tools into
// its buffered answer.
func serveToolsList(w http.ResponseWriter, r *http.Request, next http.Handler, tools []byte) {
	rec := &bufferedWriter{header: http.Header{}, status: http.StatusOK}
	next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), rawListKey{}, true)))
	body := rec.buf.Bytes()
	if i := bytes.Index(body, emptyTools); i >= 0 {
		out := make([]byte, 0, len(body)+len(tools))
		out = append(out, body[:i+len(emptyTools)-2]...)
		out = append(out, tools...)
		out = append(out, body[i+len(emptyTools):]...)
		body = out
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.status)
	_, _ = w.Write(body)
}

// bufferedWriter holds a whole response so it can be edited before it is
// sent. Flush is a no-op: a tools/list answer is complete when the handler
// returns.
type bufferedWriter struct {
	header http.Header
	status int
	wrote  bool
	buf    bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(status int) {
	if !b.wrote {
		b.status, b.wrote = status, true
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.wrote = true
	return b.buf.Write(p)
}

func (b *bufferedWriter) Flush() {}
