// Package sdktest runs an executor over a real gRPC connection inside a test
// process, so executor authors can test the contract without building a
// plugin binary.
//
//	func TestHello(t *testing.T) {
//		exec := sdktest.Start(t, hello{}, nil)
//		defs, err := exec.Load(t.Context(), sdk.LoadRequest{Source: "a", Kind: "hello", Spec: json.RawMessage(`{}`)})
//		...
//	}
//
// The harness checks what the gateway checks, and fails the test where the
// gateway would refuse the executor: Start fails it when the Info answer is
// not valid (see [sdk.Info.Validate]), and the test fails when a Load, or
// a change sent to Watch, offers tool definitions that are not valid MCP
// (see [sdk.ValidateTools]), and when a tools/call result does not match
// the top level of the tool's outputSchema (see [Client.Call]), which the
// gateway does not check.
//
// go-plugin's own log of the connection (debug lines such as "stdio EOF,
// exiting copy loop") is discarded; pass [PluginLog] to see it.
//
// The connection speaks the newest protocol version, as a current gateway
// does; [Protocol] picks an older one. [CallShutdown] has the harness call
// an executor's Shutdown when the test ends, as [sdk.Serve] does when the
// gateway stops the plugin. What the harness does not do, since the
// executor runs inside the test process: start a process, so nothing of
// sdk.Serve's process handling runs (SIGTERM, stdin EOF, the kill window
// from the environment, the redirection of stdout and stderr); restart
// an executor that died; or check more of a result than the top level of
// its structuredContent.
package sdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/hostside"
)

// Option changes how Start serves the executor.
type Option func(*options)

type options struct {
	log      io.Writer
	version  int
	shutdown bool
}

// PluginLog sends go-plugin's log of the connection, debug lines included,
// to w (os.Stderr, say) instead of discarding it.
func PluginLog(w io.Writer) Option {
	return func(o *options) { o.log = w }
}

// Protocol serves the executor at protocol version v, from
// sdk.MinProtocolVersion to sdk.ProtocolVersion, instead of the newest,
// as a gateway that speaks no newer version would: 1 carries every call
// on a gRPC stream of its own, 2 all calls on one Calls stream, 3 on the
// executor's side channel (on Linux). Start fails the test for another
// version. An executor's code is the same for all of them; this is for
// checking that.
func Protocol(v int) Option {
	return func(o *options) { o.version = v }
}

// CallShutdown has the harness call the executor's Shutdown (see
// sdk.Shutdowner) when the test ends, after it closed the connection, as
// sdk.Serve does when the gateway stops the plugin. Its context's deadline
// is that of the default kill window less Serve's reserve: 9 s. The test
// fails when Shutdown returns an error or has not returned within 10 s,
// and Start fails it when the executor is not an sdk.Shutdowner. Without
// this option the harness never calls Shutdown. The host service is closed
// by then, as under the gateway: Host.Log writes to stderr (see
// sdk.Shutdowner).
func CallShutdown() Option {
	return func(o *options) { o.shutdown = true }
}

// The kill window sdk.Serve assumes when the gateway announces none, and
// the deadline it gives Shutdown within it.
const (
	shutdownWindow   = 10 * time.Second
	shutdownDeadline = 9 * time.Second
)

// stopWait bounds the wait for the server to stop once the connection is
// closed.
const stopWait = 10 * time.Second

// startTimeout bounds the in-process handshake; it only ever runs out when
// something is badly wrong.
const startTimeout = time.Minute

// Start serves impl over a go-plugin gRPC connection inside the test process
// and returns the gateway's side of it, after calling Info as the gateway
// would. host may be nil. Everything is closed when the test ends.
func Start(t testing.TB, impl sdk.Executor, host sdk.Host, opts ...Option) *Client {
	t.Helper()
	o := options{version: sdk.ProtocolVersion}
	for _, opt := range opts {
		opt(&o)
	}
	if o.version < sdk.MinProtocolVersion || o.version > sdk.ProtocolVersion {
		t.Fatalf("sdktest: protocol %d is not one this SDK speaks; pick one from %d to %d", o.version, sdk.MinProtocolVersion, sdk.ProtocolVersion)
	}
	if o.shutdown {
		sd, ok := impl.(sdk.Shutdowner)
		if !ok {
			t.Fatalf("sdktest: CallShutdown: the executor, a %T, is not an sdk.Shutdowner (it has no Shutdown(context.Context) error method)", impl)
		}
		// The first cleanup runs last: after the connection closed.
		t.Cleanup(func() { callShutdown(t, sd) })
	}
	logger := hclog.NewNullLogger()
	if o.log != nil {
		logger = hclog.New(&hclog.LoggerOptions{Name: "sdktest", Level: hclog.Debug, Output: o.log})
	}

	// go-plugin's test mode serves in this process and hands over the
	// address instead of printing the handshake on stdout.
	serveCtx, stopServe := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	served := make(chan struct{})
	handshake := hostside.Handshake()
	handshake.ProtocolVersion = uint(o.version)
	go plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: handshake,
		// Test mode offers the lowest version of a versioned set: serve
		// the one version only, the newest unless Protocol chose another.
		Plugins:    hostside.PluginSet(impl, nil, o.version),
		GRPCServer: hostside.NewGRPCServer,
		Logger:     logger,
		Test:       &plugin.ServeTestConfig{Context: serveCtx, ReattachConfigCh: reattach, CloseCh: served},
	})
	var connected atomic.Bool
	t.Cleanup(func() {
		// Closing the connection (a later cleanup, so an earlier one to
		// run) asks the server to stop; stopping it from here as well
		// would race with that inside go-plugin. Stop it here only if
		// that did not happen.
		if connected.Load() {
			select {
			case <-served:
			case <-time.After(stopWait):
			}
		}
		stopServe()
		<-served
	})
	var cfg *plugin.ReattachConfig
	select {
	case cfg = <-reattach:
	case <-served:
		t.Fatalf("sdktest: the executor's go-plugin server stopped before it listened")
	case <-time.After(startTimeout):
		t.Fatalf("sdktest: the executor's go-plugin server did not listen within %v", startTimeout)
	}
	cfg.ReattachFunc = func() (runner.AttachedRunner, error) { return inProcess{served}, nil }

	gp := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  hostside.Handshake(),
		Plugins:          hostside.PluginSet(nil, host, cfg.ProtocolVersion),
		Reattach:         cfg,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger,
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(
				grpc.MaxCallRecvMsgSize(hostside.MaxMessageSize),
				grpc.MaxCallSendMsgSize(hostside.MaxMessageSize),
			),
			grpc.WithInitialWindowSize(hostside.StreamWindow),
			grpc.WithInitialConnWindowSize(hostside.ConnWindow),
		},
	})
	rpc, err := gp.Client()
	if err != nil {
		t.Fatalf("sdktest: connect to the executor: %v", err)
	}
	connected.Store(true)
	t.Cleanup(func() { _ = rpc.Close() })
	raw, err := rpc.Dispense(hostside.PluginName)
	if err != nil {
		t.Fatalf("sdktest: dispense the executor: %v", err)
	}
	hc := raw.(*hostside.Client)
	t.Cleanup(func() { _ = hc.Close() })
	c := &Client{t: t, c: hc}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatalf("executor Info: %v", err)
	}
	if err := info.Validate(); err != nil {
		t.Fatalf("the gateway would refuse this executor: %v", err)
	}
	return c
}

// callShutdown calls sd's Shutdown as sdk.Serve does when the gateway
// stops the plugin, and fails the test when it fails or does not return.
func callShutdown(t testing.TB, sd sdk.Shutdowner) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sd.Shutdown(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("sdktest: the executor's Shutdown failed: %v", err)
		}
	case <-time.After(shutdownWindow):
		t.Errorf("sdktest: the executor's Shutdown did not return within %v; sdk.Serve waits no longer, and the gateway kills the process then", shutdownWindow)
	}
}

// inProcess is the go-plugin runner of an executor served in the test
// process: nothing to kill, and it is gone once its server stopped.
type inProcess struct{ served <-chan struct{} }

func (p inProcess) Wait(ctx context.Context) error {
	select {
	case <-p.served:
	case <-ctx.Done():
	}
	return nil
}

func (inProcess) Kill(context.Context) error { return nil }

func (inProcess) ID() string { return "" }

func (inProcess) PluginToHost(network, address string) (string, string, error) {
	return network, address, nil
}

func (inProcess) HostToPlugin(network, address string) (string, string, error) {
	return network, address, nil
}

// Client is the gateway's side of an executor served by Start: each method
// calls the executor over gRPC as the gateway does, and Load and Watch
// fail the test, with an error naming the source and the tool, when the
// executor offers tool definitions the gateway would refuse or LLM APIs
// reject (see sdk.ValidateTools). Its methods are safe for concurrent use.
type Client struct {
	t testing.TB
	c *hostside.Client

	mu      sync.Mutex
	outputs map[string]map[string]json.RawMessage // source -> tool -> outputSchema
}

var (
	_ sdk.Executor = (*Client)(nil)
	_ sdk.Watcher  = (*Client)(nil)
)

// Info implements sdk.Executor.
func (c *Client) Info(ctx context.Context) (sdk.Info, error) { return c.c.Info(ctx) }

// Load implements sdk.Executor. The test fails when the definitions'
// tools are not valid (sdk.ValidateTools); the definitions are returned
// all the same.
func (c *Client) Load(ctx context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	defs, err := c.c.Load(ctx, req)
	if err == nil {
		c.checkTools(req.Source, "Load", defs.Tools)
	}
	return defs, err
}

// Unload implements sdk.Executor.
func (c *Client) Unload(ctx context.Context, source string) error {
	err := c.c.Unload(ctx, source)
	if err == nil {
		c.mu.Lock()
		delete(c.outputs, source)
		c.mu.Unlock()
	}
	return err
}

// Call implements sdk.Executor. call receives the executor's progress and
// notifications and answers its callbacks; a *Recorder does that as the
// gateway would. call may be nil: events are dropped then, and the
// executor's callbacks fail with sdk.ErrCallEnded.
//
// A tools/call result of a tool that declared an outputSchema (in the last
// Load of its source, or a later change) fails the test when it is not an
// error and its structuredContent is missing, not an object, lacks a
// property the schema requires, or has a top-level property of another
// JSON type than the schema's "type" says. This is a shallow check, not
// JSON Schema validation: nested schemas, formats and the like are not
// looked at, and the gateway checks nothing of it.
func (c *Client) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	res, err := c.c.Call(ctx, req, call)
	if err == nil && req.Method == "tools/call" {
		c.checkOutput(req, res)
	}
	return res, err
}

// Watch implements sdk.Watcher. The test fails when a change's
// definitions carry tools that are not valid (sdk.ValidateTools).
func (c *Client) Watch(ctx context.Context, emit func(sdk.Change)) error {
	return c.c.Watch(ctx, func(ch sdk.Change) {
		if ch.Definitions != nil {
			c.checkTools(ch.Source, "Watch", ch.Definitions.Tools)
		}
		emit(ch)
	})
}

// CallsChannel says what the next call rides on: "socket" (the executor's
// side channel) or "stream" (a gRPC stream), as hostside.Client does.
func (c *Client) CallsChannel() (channel string, err error) { return c.c.CallsChannel() }

// Version is the executor protocol version negotiated with the executor:
// sdk.ProtocolVersion, or the one Protocol chose.
func (c *Client) Version() int { return c.c.Version() }

// checkTools fails the test (from any goroutine) when tools do not
// validate, and remembers their output schemas.
func (c *Client) checkTools(source, from string, tools []json.RawMessage) {
	if err := sdk.ValidateTools(tools); err != nil {
		c.t.Errorf("sdktest: %s of source %q: the gateway would refuse these tool definitions: %v", from, source, err)
	}
	outputs := make(map[string]json.RawMessage)
	for _, raw := range tools {
		var t struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if json.Unmarshal(raw, &t) == nil && t.OutputSchema != nil {
			outputs[t.Name] = t.OutputSchema
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.outputs == nil {
		c.outputs = make(map[string]map[string]json.RawMessage)
	}
	c.outputs[source] = outputs
}

// checkOutput fails the test when a tools/call result does not match the
// tool's outputSchema (see Call).
func (c *Client) checkOutput(req sdk.CallRequest, res json.RawMessage) {
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	c.mu.Lock()
	schema := c.outputs[req.Source][p.Name]
	c.mu.Unlock()
	if schema == nil {
		return
	}
	if err := checkStructured(schema, res); err != nil {
		c.t.Errorf("sdktest: tools/call of tool %q (source %q): %v", p.Name, req.Source, err)
	}
}

// checkStructured checks a CallToolResult's structuredContent against the
// top level of an output schema.
func checkStructured(schema, res json.RawMessage) error {
	var r struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("the result is not a CallToolResult object: %v", err)
	}
	if r.IsError {
		return nil // an error result need not match
	}
	if r.StructuredContent == nil {
		return errors.New("the tool declares an outputSchema, but the result has no structuredContent; MCP requires structured results that conform to it")
	}
	var got map[string]json.RawMessage
	if json.Unmarshal(r.StructuredContent, &got) != nil || got == nil {
		return fmt.Errorf("structuredContent is %s, not a JSON object as the outputSchema says", clip(r.StructuredContent))
	}
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	var errs []error
	for _, name := range s.Required {
		if _, ok := got[name]; !ok {
			errs = append(errs, fmt.Errorf("structuredContent lacks %q, which the outputSchema requires", name))
		}
	}
	for name, prop := range s.Properties {
		v, ok := got[name]
		if !ok || prop.Type == nil {
			continue
		}
		var types []string
		if json.Unmarshal(prop.Type, &types) != nil {
			var one string
			if json.Unmarshal(prop.Type, &one) != nil {
				continue
			}
			types = []string{one}
		}
		if k := jsonType(v); !slices.ContainsFunc(types, func(t string) bool { return t == k || t == "number" && k == "integer" }) {
			errs = append(errs, fmt.Errorf("structuredContent.%s is %s (%s), but the outputSchema says %s", name, k, clip(v), strings.Join(types, " or ")))
		}
	}
	return errors.Join(errs...)
}

// jsonType is the JSON Schema type of a JSON value.
func jsonType(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		if _, err := n.Int64(); err == nil {
			return "integer"
		}
	}
	return "number"
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// Recorder is a Call that records what the executor sent, for assertions.
// CallToolFunc and RequestFunc, when set, answer callbacks. Unset, they
// answer as the gateway does for a client that declared no capabilities
// and a catalog without the tool: Request answers roots/list with no roots
// and anything else with an *sdk.RPCError (sdk.CodeMethodNotFound), and
// CallTool with an *sdk.RPCError (sdk.CodeInvalidParams, "unknown tool:
// NAME ..."), as the gateway answers a name that is not in its catalog.
type Recorder struct {
	mu sync.Mutex
	// Progresses are the progress reports of the call, in order.
	Progresses []sdk.Progress
	// Notifications are the notifications of the call, in order.
	Notifications []sdk.Notification

	// CallToolFunc, when set, answers the executor's Call.CallTool.
	CallToolFunc func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	// RequestFunc, when set, answers the executor's Call.Request.
	RequestFunc func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

var _ sdk.Call = (*Recorder)(nil)

// Progress implements sdk.Call.
func (r *Recorder) Progress(p sdk.Progress) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Progresses = append(r.Progresses, p)
	return nil
}

// Notify implements sdk.Call.
func (r *Recorder) Notify(n sdk.Notification) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Notifications = append(r.Notifications, n)
	return nil
}

// Request implements sdk.Call.
func (r *Recorder) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if r.RequestFunc == nil {
		if method == "roots/list" {
			return json.RawMessage(`{"roots":[]}`), nil
		}
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound,
			Message: fmt.Sprintf("the client did not declare the capability that %s needs (sdktest.Recorder without a RequestFunc)", method)}
	}
	return r.RequestFunc(ctx, method, params)
}

// CallTool implements sdk.Call.
func (r *Recorder) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if r.CallToolFunc == nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams,
			Message: fmt.Sprintf("unknown tool: %s (sdktest.Recorder without a CallToolFunc)", name)}
	}
	return r.CallToolFunc(ctx, name, args)
}
