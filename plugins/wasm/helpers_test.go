package wasm

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// Guests are built once per test run from Go source (BuildGo is under
// test too) into buildDir, and compiled into cacheDir, the compilation
// cache the tests' executors share; TestMain removes both.
var (
	buildDir string
	cacheDir string
	guests   = map[string]string{} // name -> built module
)

// guestSources are the guests: test guests in testdata, examples in the
// repository's examples/tools.
var guestSources = []struct{ name, dir, style string }{
	{StyleCommand, "testdata/command", StyleCommand},
	{StyleReactor, "testdata/reactor", StyleReactor},
	{"wasm-wordcount", "../../examples/tools/wasm-wordcount", StyleCommand},
	{"wasm-slugify", "../../examples/tools/wasm-slugify", StyleReactor},
}

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "skillgate-wasm-test-*")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	buildDir, cacheDir = dir, filepath.Join(dir, "cache")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	var modules []string
	for _, g := range guestSources {
		out := filepath.Join(dir, g.name+".wasm")
		if err := BuildGo(ctx, g.dir, out, g.style); err != nil {
			return 0, fmt.Errorf("build guest %s: %w", g.name, err)
		}
		guests[g.name] = out
		modules = append(modules, out)
	}
	// -race slows wazero's compiler tenfold; compile the guests once in a
	// test binary built without it (see testdata/precompile). The
	// executors under test then load them from the cache, as after a
	// restart. Should this fail, they compile the guests themselves, slower.
	pre := exec.CommandContext(ctx, "go", append([]string{"test", "-count=1", "-run", "^TestPrecompile$", "./testdata/precompile", "-args", cacheDir}, modules...)...)
	if out, err := pre.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "precompile guests (tests will compile them, slowly): %v\n%s", err, out)
	} else if testing.Verbose() {
		fmt.Printf("built and precompiled %d guests in %v\n", len(modules), time.Since(start).Round(time.Millisecond))
	}
	return m.Run(), nil
}

// guest returns the built module of a guest.
func guest(t testing.TB, name string) string {
	t.Helper()
	p, ok := guests[name]
	if !ok {
		t.Fatalf("no guest %q", name)
	}
	return p
}

// toolFolder makes a tool folder holding the guest of style as module.wasm
// and returns the LoadRequest.Spec for it; tool holds tool.yaml's keys
// (merged over name, entry, runtime and wasm.style) and "limits" the
// Spec's limits; setup, if given, adds files to the folder.
func toolFolder(t testing.TB, style string, tool map[string]any, setup ...func(dir string)) json.RawMessage {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, guest(t, style), filepath.Join(dir, "module.wasm"))
	for _, f := range setup {
		f(dir)
	}
	var limits any
	def := map[string]any{
		"name":        "guest",
		"description": "a test guest",
		"runtime":     "wasm",
		"entry":       "module.wasm",
		"input_schema": map[string]any{
			"type": "object", "properties": map[string]any{"op": map[string]any{"type": "string"}},
		},
	}
	w := map[string]any{"style": style}
	if style == StyleReactor {
		w["function"] = "run"
	}
	for k, v := range tool {
		if k == "limits" {
			limits = v
			continue
		}
		if k == "wasm" {
			for wk, wv := range v.(map[string]any) {
				w[wk] = wv
			}
			continue
		}
		def[k] = v
	}
	def["wasm"] = w
	s := map[string]any{"dir": dir, "tool": def}
	if limits != nil {
		s["limits"] = limits
	}
	spec, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startExec serves a fresh executor over in-memory gRPC, as the gateway
// talks to the plugin process, with a compilation cache for this test.
func startExec(t testing.TB, opts ...Option) (*sdktest.Client, *Executor) {
	t.Helper()
	e := New(append([]Option{WithLogger(quietLogger()), WithCacheDir(cacheDir)}, opts...)...)
	t.Cleanup(func() { _ = e.Close() })
	return sdktest.Start(t, e, nil), e
}

func load(t testing.TB, c *sdktest.Client, source string, spec json.RawMessage) sdk.Definitions {
	t.Helper()
	defs, err := c.Load(t.Context(), sdk.LoadRequest{Source: source, Kind: Kind, Spec: spec})
	if err != nil {
		t.Fatalf("Load %s: %v", source, err)
	}
	return defs
}

// toolCall is a tools/call request as the gateway routes it to a source.
func toolCall(source, tool, args string) sdk.CallRequest {
	return sdk.CallRequest{
		Source: source,
		Method: "tools/call",
		Params: json.RawMessage(fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args)),
	}
}

type result struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
	Meta              map[string]any `json:"_meta"`
}

func (r result) text() string {
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

func (r result) status() string {
	s, _ := r.Meta[MetaStatus].(string)
	return s
}

// call runs a tools/call of tool "guest" and decodes its result.
func call(t testing.TB, c *sdktest.Client, source, args string) (result, *sdktest.Recorder) {
	t.Helper()
	rec := &sdktest.Recorder{}
	raw, err := c.Call(t.Context(), toolCall(source, "guest", args), rec)
	if err != nil {
		t.Fatalf("call %s %s: %v", source, args, err)
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return r, rec
}

// startedCall is a Recorder that tells when the guest wrote its first
// stderr line, so a test knows the call is running.
type startedCall struct {
	*sdktest.Recorder
	once    sync.Once
	started chan struct{}
}

func newStartedCall() *startedCall {
	return &startedCall{Recorder: &sdktest.Recorder{}, started: make(chan struct{})}
}

func (c *startedCall) Notify(n sdk.Notification) error {
	c.once.Do(func() { close(c.started) })
	return c.Recorder.Notify(n)
}

// wait blocks until the call is running.
func (c *startedCall) wait(t testing.TB) {
	t.Helper()
	select {
	case <-c.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not start")
	}
}
