package sdktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// tools is an executor whose sources offer the tools of their spec, as
// given, and whose Watch sends one change with the tools in watchTools.
type tools struct {
	watchTools []json.RawMessage
}

func (tools) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "tools", Kinds: []string{"tools"}}, nil
}

func (tools) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	var defs sdk.Definitions
	if err := json.Unmarshal(req.Spec, &defs.Tools); err != nil {
		return sdk.Definitions{}, fmt.Errorf("%w: %v", sdk.ErrInvalidSpec, err)
	}
	return defs, nil
}

func (tools) Unload(context.Context, string) error { return nil }

// Call answers a tools/call with its arguments as structuredContent, or
// with none when there are no arguments.
func (tools) Call(_ context.Context, req sdk.CallRequest, _ sdk.Call) (json.RawMessage, error) {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(req.Params, &p)
	if p.Arguments == nil {
		return json.RawMessage(`{"content":[]}`), nil
	}
	return json.Marshal(map[string]any{"content": []any{}, "structuredContent": p.Arguments})
}

func (e tools) Watch(ctx context.Context, emit func(sdk.Change)) error {
	if e.watchTools != nil {
		emit(sdk.Change{Source: "w", Definitions: &sdk.Definitions{Tools: e.watchTools}})
	}
	<-ctx.Done()
	return nil
}

// errorTB records Errorf instead of failing the test.
type errorTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (e *errorTB) Errorf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errors = append(e.errors, fmt.Sprintf(format, args...))
}

func (e *errorTB) got() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.errors, "\n")
}

// TestLoadChecksTools: a Load that offers tools the gateway would refuse
// fails the test with a message naming the source and the tool; valid
// tools pass.
func TestLoadChecksTools(t *testing.T) {
	tb := &errorTB{TB: t}
	c := sdktest.Start(tb, tools{}, nil)
	ctx := context.Background()
	if _, err := c.Load(ctx, sdk.LoadRequest{Source: "good", Kind: "tools",
		Spec: json.RawMessage(`[{"name":"greet","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}]`)}); err != nil {
		t.Fatal(err)
	}
	if got := tb.got(); got != "" {
		t.Fatalf("valid tools failed the test: %s", got)
	}
	if _, err := c.Load(ctx, sdk.LoadRequest{Source: "bad", Kind: "tools",
		Spec: json.RawMessage(`[{"name":"get.weather","inputSchema":{"type":"object"}},{"name":"x","inputSchema":{"type":"string"}}]`)}); err != nil {
		t.Fatal(err)
	}
	got := tb.got()
	for _, want := range []string{`Load of source "bad"`, `tool "get.weather"`, `tool "x": inputSchema must have "type": "object"`} {
		if !strings.Contains(got, want) {
			t.Errorf("test failure %q does not say %q", got, want)
		}
	}
}

// TestWatchChecksTools: a change with invalid tools fails the test too.
func TestWatchChecksTools(t *testing.T) {
	tb := &errorTB{TB: t}
	c := sdktest.Start(tb, tools{watchTools: []json.RawMessage{json.RawMessage(`{"name":"dup","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"dup","inputSchema":{"type":"object"}}`)}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan sdk.Change, 1)
	go func() { _ = c.Watch(ctx, func(ch sdk.Change) { got <- ch }) }()
	<-got
	if msg := tb.got(); !strings.Contains(msg, `Watch of source "w"`) || !strings.Contains(msg, `tool "dup" is defined twice`) {
		t.Errorf("test failure %q, want one naming the source and the duplicate tool", msg)
	}
}

// TestCallChecksStructuredContent: a result of a tool with an outputSchema
// fails the test when its structuredContent is missing or does not match
// the schema's top level; other tools, and error results, are not checked.
func TestCallChecksStructuredContent(t *testing.T) {
	tb := &errorTB{TB: t}
	c := sdktest.Start(tb, tools{}, nil)
	ctx := context.Background()
	if _, err := c.Load(ctx, sdk.LoadRequest{Source: "a", Kind: "tools", Spec: json.RawMessage(`[
		{"name":"typed","inputSchema":{"type":"object"},"outputSchema":{"type":"object","required":["n"],
			"properties":{"n":{"type":"integer"},"s":{"type":"string"},"v":{"type":["number","null"]}}}},
		{"name":"free","inputSchema":{"type":"object"}}]`)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, args string
		want       []string // in the test's failures; none means it passes
	}{
		{tool: "typed", args: `{"n":1,"s":"x","v":null}`},
		{tool: "typed", args: `{"n":2,"v":2.5}`},
		{tool: "free", args: `{"n":"anything"}`},
		{tool: "free"},
		{tool: "typed", want: []string{`tool "typed" (source "a")`, "has no structuredContent"}},
		{tool: "typed", args: `[1]`, want: []string{"not a JSON object"}},
		{tool: "typed", args: `{"s":1}`, want: []string{`lacks "n"`, "structuredContent.s is integer (1), but the outputSchema says string"}},
		{tool: "typed", args: `{"n":1.5}`, want: []string{"structuredContent.n is number (1.5), but the outputSchema says integer"}},
	} {
		tb.mu.Lock()
		tb.errors = nil
		tb.mu.Unlock()
		params := `{"name":"` + tc.tool + `"}`
		if tc.args != "" {
			params = `{"name":"` + tc.tool + `","arguments":` + tc.args + `}`
		}
		if _, err := c.Call(ctx, sdk.CallRequest{Source: "a", Method: "tools/call", Params: json.RawMessage(params)}, &sdktest.Recorder{}); err != nil {
			t.Fatal(err)
		}
		got := tb.got()
		if len(tc.want) == 0 && got != "" {
			t.Errorf("%s %s failed the test: %s", tc.tool, tc.args, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %s: failure %q does not say %q", tc.tool, tc.args, got, w)
			}
		}
	}
}

// TestQuietByDefault runs a test that uses the harness in a child process
// with -test.v, as `go test -v` does, and checks that go-plugin's log of
// the connection stays out of its output, unless PluginLog asks for it.
func TestQuietByDefault(t *testing.T) {
	if os.Getenv("SDKTEST_HELPER") != "" {
		t.Skip("helper process")
	}
	for _, tc := range []struct {
		log  string
		want bool
	}{{"", false}, {"1", true}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperStartAndStop$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "SDKTEST_HELPER=1", "SDKTEST_HELPER_LOG="+tc.log)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper test: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestHelperStartAndStop") {
			t.Fatalf("helper test did not run:\n%s", out)
		}
		logged := strings.Contains(string(out), "[DEBUG]") || strings.Contains(string(out), `"@level":"debug"`)
		if logged != tc.want {
			t.Errorf("with PluginLog=%v, go-plugin's debug log in the output is %v, want %v:\n%s", tc.log != "", logged, tc.want, out)
		}
		if !tc.want && strings.Contains(string(out), "plugin") {
			t.Errorf("the harness wrote go-plugin's log into the test output:\n%s", out)
		}
	}
}

// TestHelperStartAndStop is the child of TestQuietByDefault.
func TestHelperStartAndStop(t *testing.T) {
	if os.Getenv("SDKTEST_HELPER") == "" {
		t.Skip("run by TestQuietByDefault")
	}
	var opts []sdktest.Option
	if os.Getenv("SDKTEST_HELPER_LOG") != "" {
		opts = append(opts, sdktest.PluginLog(os.Stderr))
	}
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			c := sdktest.Start(t, tools{}, nil, opts...)
			if _, err := c.Call(context.Background(), sdk.CallRequest{Source: "a", Method: "tools/call"}, &sdktest.Recorder{}); err != nil {
				t.Fatal(err)
			}
		})
	}
	runtime.GC()
}

// TestProtocol serves an executor at every protocol version the SDK
// speaks, and refuses one it does not.
func TestProtocol(t *testing.T) {
	for v := sdk.MinProtocolVersion; v <= sdk.ProtocolVersion; v++ {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			c := sdktest.Start(t, tools{}, nil, sdktest.Protocol(v))
			if c.Version() != v {
				t.Fatalf("the harness speaks protocol %d, want %d", c.Version(), v)
			}
			res, err := c.Call(context.Background(), sdk.CallRequest{Source: "a", Method: "tools/call",
				Params: json.RawMessage(`{"name":"x","arguments":{"v":1}}`)}, &sdktest.Recorder{})
			if err != nil || !strings.Contains(string(res), `"structuredContent":{"v":1}`) {
				t.Fatalf("call at protocol %d: %s, %v", v, res, err)
			}
		})
	}
	for _, v := range []int{sdk.MinProtocolVersion - 1, sdk.ProtocolVersion + 1} {
		tb := &fatalTB{TB: t}
		func() {
			defer func() { _ = recover() }()
			sdktest.Start(tb, tools{}, nil, sdktest.Protocol(v))
		}()
		if !strings.Contains(tb.msg, fmt.Sprintf("protocol %d", v)) {
			t.Errorf("Start at protocol %d: failure %q, want one naming the version", v, tb.msg)
		}
	}
}

// fatalTB records Fatalf and stops the caller, as FailNow would.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}

// stopper records its Shutdown.
type stopper struct {
	tools
	left chan time.Duration // what Shutdown's context had left
	err  error
}

func (s stopper) Shutdown(ctx context.Context) error {
	dl, _ := ctx.Deadline()
	s.left <- time.Until(dl)
	return s.err
}

// TestCallShutdown checks that CallShutdown has the harness call Shutdown
// once the test ends, with a deadline, and that a failed Shutdown fails
// the test; without the option Shutdown is not called.
func TestCallShutdown(t *testing.T) {
	impl := stopper{left: make(chan time.Duration, 2)}
	t.Run("without", func(t *testing.T) { sdktest.Start(t, impl, nil) })
	select {
	case <-impl.left:
		t.Fatal("Shutdown called without CallShutdown")
	default:
	}
	t.Run("with", func(t *testing.T) { sdktest.Start(t, impl, nil, sdktest.CallShutdown()) })
	select {
	case left := <-impl.left:
		if left <= 0 || left > 10*time.Second {
			t.Errorf("Shutdown had %v left, want a deadline within the default kill window", left)
		}
	default:
		t.Fatal("Shutdown not called with CallShutdown")
	}

	impl.err = errors.New("the upstream would not stop")
	tb := &errorTB{TB: t}
	t.Run("failing", func(t *testing.T) {
		tb.TB = t
		sdktest.Start(tb, impl, nil, sdktest.CallShutdown())
	})
	<-impl.left
	if got := tb.got(); !strings.Contains(got, "the upstream would not stop") {
		t.Errorf("a failed Shutdown failed the test with %q, want its error", got)
	}

	fb := &fatalTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		sdktest.Start(fb, tools{}, nil, sdktest.CallShutdown())
	}()
	if !strings.Contains(fb.msg, "Shutdowner") {
		t.Errorf("CallShutdown of an executor without Shutdown: failure %q, want one saying it is no sdk.Shutdowner", fb.msg)
	}
}
