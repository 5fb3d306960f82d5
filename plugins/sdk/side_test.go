package sdk

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk/internal/link"

	"github.com/hashicorp/go-plugin"

	"github.com/skillgate/skillgate/plugins/sdk/internal/pb"
)

// blocker answers "echo" with its params and holds "block" until its
// context ends, reporting that on cancelled.
type blocker struct{ cancelled chan struct{} }

func (blocker) Info(context.Context) (Info, error) { return Info{Name: "blocker"}, nil }
func (blocker) Load(context.Context, LoadRequest) (Definitions, error) {
	return Definitions{}, nil
}
func (blocker) Unload(context.Context, string) error { return nil }
func (b blocker) Call(ctx context.Context, req CallRequest, _ Call) (json.RawMessage, error) {
	if req.Method == "block" {
		<-ctx.Done()
		b.cancelled <- struct{}{}
		return nil, ctx.Err()
	}
	return req.Params, nil
}

// startV3 serves impl at protocol 3 over an in-memory go-plugin connection
// and returns the host's client after Info.
func startV3(t *testing.T, impl Executor) *client {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the side channel is offered on Linux only")
	}
	rpc, server := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{
		link.PluginName: &grpcPlugin{impl: impl, version: 3},
	})
	t.Cleanup(func() {
		server.Stop()
		_ = rpc.Close()
	})
	raw, err := rpc.Dispense(link.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	c := raw.(*client)
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

func echoCall(t *testing.T, c *client, params string) {
	t.Helper()
	res, err := c.Call(context.Background(), CallRequest{Method: "echo", Params: json.RawMessage(params)}, nil)
	if err != nil || string(res) != params {
		t.Fatalf("echo = %s, %v; want %s", res, err, params)
	}
}

// A call running on the side channel when the connection breaks fails at
// once with ErrPluginShutdown, the executor cancels it, and the next
// calls ride a Calls stream.
func TestSideChannelBreakFallsBack(t *testing.T) {
	impl := blocker{cancelled: make(chan struct{}, 1)}
	c := startV3(t, impl)
	echoCall(t, c, `{"a":1}`)
	if ch, _ := c.CallsChannel(); ch != "socket" {
		t.Fatalf("calls ride on %q, want socket", ch)
	}

	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), CallRequest{Method: "block"}, nil)
		errc <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for c.running() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	c.mux.mu.Lock()
	c.mux.cur.cancel() // the connection breaks under the call
	c.mux.mu.Unlock()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrPluginShutdown) || !strings.Contains(err.Error(), "calls channel") {
			t.Fatalf("call on a broken channel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not end when its channel broke")
	}
	select {
	case <-impl.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the executor did not cancel the call whose channel broke")
	}

	echoCall(t, c, `{"b":2}`)
	if ch, _ := c.CallsChannel(); ch != "stream" {
		t.Fatalf("after the break, calls ride on %q, want stream", ch)
	}
}

// running counts the calls in flight on the current stream.
func (c *client) running() int {
	c.mux.mu.Lock()
	defer c.mux.mu.Unlock()
	if c.mux.cur == nil {
		return 0
	}
	c.mux.cur.mu.Lock()
	defer c.mux.cur.mu.Unlock()
	return len(c.mux.cur.pending)
}

// An offer nobody takes in time closes for good; the host then says why
// and uses the Calls stream.
func TestSideChannelOfferExpires(t *testing.T) {
	old := sideAcceptWindow
	sideAcceptWindow = time.Nanosecond
	t.Cleanup(func() { sideAcceptWindow = old })
	c := startV3(t, blocker{})
	ch, err := c.CallsChannel()
	if ch != "stream" || err == nil {
		t.Fatalf("calls ride on %q (%v), want stream and the reason", ch, err)
	}
	echoCall(t, c, `{"c":3}`)

	// Asked again, the executor offers no dead address: the calls stay on
	// the stream.
	sideAcceptWindow = old
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ch, err := c.CallsChannel(); ch != "stream" || err == nil {
		t.Fatalf("after a second Info, calls ride on %q (%v), want the stream and the first reason", ch, err)
	}
	echoCall(t, c, `{"d":4}`)
}

// The socket refuses a wrong token, and takes the right one after it; once
// taken it accepts nobody else.
func TestSideChannelToken(t *testing.T) {
	served := make(chan *frameConn, 1)
	o, err := offerSide(func(fc *frameConn) { served <- fc })
	if err != nil || o == nil {
		if runtime.GOOS != "linux" {
			t.Skip("the side channel is offered on Linux only")
		}
		t.Fatalf("offer: %v", err)
	}
	defer o.close()

	wrong := make([]byte, sideTokenSize)
	if _, err := dialSide(context.Background(), o.address, wrong); err == nil {
		t.Fatal("a wrong token opened the channel")
	}
	if _, err := dialSide(context.Background(), o.address, wrong[:3]); err == nil {
		t.Fatal("a short token opened the channel")
	}
	// A connection that never sends its token does not hold the others up.
	idle, err := net.Dial("unix", o.address)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	host, err := dialSide(context.Background(), o.address, o.token)
	if err != nil {
		t.Fatalf("the right token: %v", err)
	}
	defer host.Close()
	exec := <-served
	defer exec.Close()
	if o.open() {
		t.Error("the offer is still open after a host took it")
	}
	if _, err := dialSide(context.Background(), o.address, o.token); err == nil {
		t.Error("a second connection opened a taken channel")
	}

	// Both ends carry messages, big ones too, in order.
	big := strings.Repeat("x", 300<<10)
	for _, p := range []string{`{}`, `"` + big + `"`, `{"after":"big"}`} {
		werr := make(chan error, 1)
		go func() {
			werr <- host.write(&pb.CallFrame{Frame: &pb.CallFrame_Start{Start: &pb.CallRequest{CallId: "1", Params: []byte(p)}}})
		}()
		var f pb.CallFrame
		if err := exec.read(&f); err != nil || string(f.GetStart().GetParams()) != p {
			t.Fatalf("read %d bytes, %v; want %d", len(f.GetStart().GetParams()), err, len(p))
		}
		if err := <-werr; err != nil {
			t.Fatal(err)
		}
	}
	_ = exec.Close()
	var ev pb.CallEvent
	if err := host.read(&ev); err != io.EOF {
		t.Fatalf("read after the executor closed: %v, want EOF", err)
	}
}

// A length prefix over the limit is refused before anything is allocated.
func TestSideChannelOversizedFrame(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() { _, _ = a.Write([]byte{0xff, 0xff, 0xff, 0xff}) }()
	var f pb.CallFrame
	err := newFrameConn(b).read(&f)
	if err == nil || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("err = %v", err)
	}
}

// TestMain lets the side channel tests re-execute the test binary as a
// client of another user, and the shutdown tests as a plugin.
func TestMain(m *testing.M) {
	if mode := os.Getenv(envShutdownMode); mode != "" {
		servePlugin(mode)
		os.Exit(0)
	}
	if addr := os.Getenv("SDK_TEST_SIDE_DIAL"); addr != "" {
		token, _ := hex.DecodeString(os.Getenv("SDK_TEST_SIDE_TOKEN"))
		if _, err := dialSide(context.Background(), addr, token); err != nil {
			fmt.Println("refused:", err)
			os.Exit(3)
		}
		fmt.Println("opened")
		os.Exit(0)
	}
	os.Exit(m.Run())
}
