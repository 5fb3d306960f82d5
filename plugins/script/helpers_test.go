package script

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// requireCmd skips (or fails under CI) when a program is missing.
func requireCmd(t testing.TB, name string) {
	t.Helper()
	_, err := exec.LookPath(name)
	testenv.Require(t, name, err == nil, "run ./scripts/test-deps.sh")
}

// harness is an executor served over gRPC (sdktest) with a root of its own.
type harness struct {
	t    testing.TB
	exec *Executor
	c    *sdktest.Client
}

func newHarness(t testing.TB, opts ...Option) *harness {
	t.Helper()
	opts = append([]Option{WithRoot(t.TempDir()), WithLogger(slog.New(slog.NewTextHandler(testWriter{t}, nil)))}, opts...)
	e := New(opts...)
	t.Cleanup(func() { _ = e.Close() })
	return &harness{t: t, exec: e, c: sdktest.Start(t, e, nil)}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// folder writes a tool folder: tool.yaml plus files (name -> content).
func folder(t testing.TB, toolYAML string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	_ = os.Chmod(dir, 0o755)
	files["tool.yaml"] = toolYAML
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// load loads a folder as source name, with limits.
func (h *harness) load(name, dir string, limits toolspec.Limits) (sdk.Definitions, error) {
	h.t.Helper()
	tool, err := toolspec.Load(dir)
	if err != nil {
		h.t.Fatalf("toolspec.Load: %v", err)
	}
	spec, _ := json.Marshal(toolspec.Spec{Dir: dir, Tool: *tool, Limits: limits})
	return h.c.Load(context.Background(), sdk.LoadRequest{Source: name, Kind: Kind, Spec: spec})
}

func (h *harness) mustLoad(name, dir string, limits toolspec.Limits) {
	h.t.Helper()
	if _, err := h.load(name, dir, limits); err != nil {
		h.t.Fatalf("Load %s: %v", name, err)
	}
}

// result is a decoded CallToolResult.
type result struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Meta              map[string]any  `json:"_meta"`
	raw               string
}

func (r result) status() string { s, _ := r.Meta[StatusKey].(string); return s }

func (r result) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// call calls tool name of source with args, bounded by a minute.
func (h *harness) call(source, name string, args any, rec *sdktest.Recorder) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return h.callCtx(ctx, source, name, args, rec)
}

func (h *harness) callCtx(ctx context.Context, source, name string, args any, rec *sdktest.Recorder) result {
	h.t.Helper()
	if rec == nil {
		rec = &sdktest.Recorder{}
	}
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	raw, err := h.c.Call(ctx, sdk.CallRequest{Source: source, Method: "tools/call", Params: params}, rec)
	if err != nil {
		h.t.Fatalf("Call %s: %v", name, err)
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		h.t.Fatalf("result %s: %v", raw, err)
	}
	r.raw = string(raw)
	return r
}

func sprintf(format string, args ...any) string { return fmtSprintf(format, args...) }

var fmtSprintf = fmt.Sprintf

func sdkCall(source string, params []byte) sdk.CallRequest {
	return sdk.CallRequest{Source: source, Method: "tools/call", Params: params}
}

// loadSpec loads a ready-made spec.
func loadSpec(t testing.TB, h *harness, name string, spec toolspec.Spec) {
	t.Helper()
	raw, _ := json.Marshal(spec)
	if _, err := h.c.Load(context.Background(), sdk.LoadRequest{Source: name, Kind: Kind, Spec: raw}); err != nil {
		t.Fatalf("Load %s: %v", name, err)
	}
}
