package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/hostside"
)

// instance is one process of a plugin, from launch to teardown.
type instance struct {
	gp      *plugin.Client
	exec    *hostside.Client
	conn    *grpc.ClientConn // for health checks
	proc    *proc
	pid     int
	started time.Time
	stop    context.CancelFunc // ends the instance's goroutines

	probe chan struct{} // asks the monitor for a health check
	// alive is closed when a health check asked for after it was handed
	// out ends without finding the process gone (checkAlive); guarded by
	// aliveMu.
	aliveMu sync.Mutex
	alive   chan struct{}

	downOnce sync.Once
	down     chan struct{} // closed once the instance is known to be gone
	cause    string        // why; written before down is closed

	teardownOnce sync.Once
}

// die records that the instance is gone, and why; the first cause counts.
func (i *instance) die(cause string) {
	i.downOnce.Do(func() {
		i.cause = cause
		close(i.down)
	})
}

func (i *instance) isDown() (cause string, down bool) {
	select {
	case <-i.down:
		return i.cause, true
	default:
		return "", false
	}
}

func (i *instance) requestProbe() {
	select {
	case i.probe <- struct{}{}:
	default:
	}
}

// checkAlive asks the monitor for a health check and returns a channel
// closed once a check that began after this call finds the process still
// there. A process found gone closes down instead.
func (i *instance) checkAlive() <-chan struct{} {
	i.aliveMu.Lock()
	ch := i.alive
	i.aliveMu.Unlock()
	i.requestProbe()
	return ch
}

// probing is called as a health check begins: it returns the channel to
// close if the process is found there, and hands later checkAlive callers a
// new one, for a check of their own.
func (i *instance) probing() chan struct{} {
	i.aliveMu.Lock()
	defer i.aliveMu.Unlock()
	ch := i.alive
	i.alive = make(chan struct{})
	return ch
}

// maxProtocol is the newest executor protocol version the host offers.
func (p *Plugin) maxProtocol() int {
	if m := p.opts.MaxProtocol; m > 0 && m < sdk.ProtocolVersion {
		return max(m, sdk.MinProtocolVersion)
	}
	return sdk.ProtocolVersion
}

// pluginSets are the handshake's plugin sets, one per version offered.
func (p *Plugin) pluginSets() map[int]plugin.PluginSet {
	sets := hostside.VersionedPlugins(nil, p.opts.Host)
	for v := range sets {
		if v > p.maxProtocol() {
			delete(sets, v)
		}
	}
	return sets
}

// launch starts one process and returns it handshaken, with a valid Info
// answered and its monitor and watch goroutines running under life. ctx
// bounds the launch. It runs nothing when the host gave up on the plugin's
// file (ErrGaveUp), and gives up on it when it should.
func (p *Plugin) launch(ctx, life context.Context) (*instance, sdk.Info, error) {
	name, path := p.spec.Name, p.spec.Path
	if err := checkExecutable(path); err != nil {
		return nil, sdk.Info{}, fmt.Errorf("start executor %q: %w", name, err)
	}
	version, err := p.tries.check(path)
	if err != nil {
		return nil, sdk.Info{}, err
	}
	stderr := newLineLogger(p.log, "stderr")
	pr := newProc(name, nil, stderr)
	gp := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  hostside.Handshake(),
		VersionedPlugins: p.pluginSets(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		RunnerFunc: func(_ hclog.Logger, base *exec.Cmd, _ string) (runner.Runner, error) {
			// base carries only go-plugin's variables (SkipHostEnv).
			cmd := exec.Command(path, p.spec.Args...)
			cmd.Env = append(childEnv(p.opts.KillWindow, p.spec.Env), base.Env...)
			pr.cmd = cmd
			return pr, nil
		},
		SkipHostEnv: true,
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(
				grpc.MaxCallRecvMsgSize(hostside.MaxMessageSize),
				grpc.MaxCallSendMsgSize(hostside.MaxMessageSize),
			),
			// Fixed windows turn off gRPC's bandwidth-delay probing, which
			// sends a ping (and draws an ack) for nearly every small
			// message on a link whose bandwidth never changes.
			grpc.WithInitialWindowSize(hostside.StreamWindow),
			grpc.WithInitialConnWindowSize(hostside.ConnWindow),
		},
		// Our own deadline (below) comes first and explains itself better.
		StartTimeout: p.opts.StartTimeout + time.Minute,
		Logger:       &hclogAdapter{log: p.log},
		SyncStdout:   newLineLogger(p.log, "stdout"),
		SyncStderr:   newLineLogger(p.log, "stderr"),
	})

	startCtx, cancel := context.WithTimeout(ctx, p.opts.StartTimeout)
	defer cancel()
	stop := context.AfterFunc(startCtx, pr.kill)
	exec, conn, info, err := handshake(startCtx, gp)
	if !stop() && err == nil {
		err = startCtx.Err() // killed right after it answered
	}
	if err == nil {
		if verr := info.Validate(); verr != nil {
			err = fmt.Errorf("%w: %w", ErrInvalidInfo, verr)
		}
	}
	if err != nil {
		pr.kill()
		gp.Kill()
		if exec != nil {
			_ = exec.Close()
		}
		var final, first bool
		// A client means the go-plugin handshake completed: Info failed.
		err, final = p.startError(ctx, startCtx, pr, stderr, err, exec != nil)
		if ctx.Err() != nil {
			return nil, sdk.Info{}, err // the caller gave up, not the plugin
		}
		err, first = p.tries.failed(version, err, final)
		if first {
			p.log.Error("executor given up on: it is not started again until its file changes or the gateway reloads (SIGHUP)", "path", path, "error", err)
		}
		return nil, sdk.Info{}, err
	}
	p.tries.succeeded(version)

	if _, err := exec.CallsChannel(); err != nil {
		// Calls still work, on the slower gRPC stream.
		p.log.Warn("executor offered a calls channel that could not be opened; calls use the gRPC stream", "err", err)
	}
	ictx, icancel := context.WithCancel(life)
	inst := &instance{
		gp:      gp,
		exec:    exec,
		conn:    conn,
		proc:    pr,
		pid:     pr.PID(),
		started: time.Now(),
		stop:    icancel,
		probe:   make(chan struct{}, 1),
		alive:   make(chan struct{}),
		down:    make(chan struct{}),
	}
	p.wg.Add(2)
	go p.monitor(ictx, inst, stderr)
	go p.watch(ictx, inst)
	return inst, info, nil
}

// handshake runs go-plugin's handshake, dispenses the executor and calls Info.
func handshake(ctx context.Context, gp *plugin.Client) (*hostside.Client, *grpc.ClientConn, sdk.Info, error) {
	rpc, err := gp.Client()
	if err != nil {
		return nil, nil, sdk.Info{}, err
	}
	raw, err := rpc.Dispense(hostside.PluginName)
	if err != nil {
		return nil, nil, sdk.Info{}, fmt.Errorf("%w: dispense: %v", ErrHandshake, err)
	}
	exec, ok := raw.(*hostside.Client)
	if !ok {
		return nil, nil, sdk.Info{}, fmt.Errorf("%w: dispensed %T, not an executor", ErrHandshake, raw)
	}
	var conn *grpc.ClientConn
	if g, ok := rpc.(*plugin.GRPCClient); ok {
		conn = g.Conn
	}
	info, err := exec.Info(ctx)
	if err != nil {
		return exec, nil, sdk.Info{}, fmt.Errorf("Info: %w", err)
	}
	return exec, conn, info, nil
}

// startError explains why a launch failed. go-plugin's errors are strings
// meant for its own users; this says what went wrong in the gateway's terms.
// final says that launching the same file again cannot help: it is not an
// executor plugin this gateway can speak to, or its Info is invalid.
//
// handshaken says that go-plugin's handshake completed, so that what failed
// or took too long is Info.
func (p *Plugin) startError(ctx, startCtx context.Context, pr *proc, stderr *lineLogger, err error, handshaken bool) (_ error, final bool) {
	what := fmt.Sprintf("executor %q (%s)", p.spec.Name, p.spec.Path)
	if ctx.Err() != nil {
		return fmt.Errorf("start %s: %w", what, ctx.Err()), false
	}
	note := exitNote(pr, stderr)
	if errors.Is(startCtx.Err(), context.DeadlineExceeded) {
		if handshaken {
			return fmt.Errorf("start %s: %w: it completed the go-plugin handshake, but its Info did not answer within %v%s; "+
				"keep Info quick; do slow set-up in Load", what, ErrStartTimeout, p.opts.StartTimeout, note), false
		}
		return fmt.Errorf("start %s: %w: no go-plugin handshake within %v%s", what, ErrStartTimeout, p.opts.StartTimeout, note), false
	}
	if errors.Is(err, ErrInvalidInfo) {
		return fmt.Errorf("start %s: %w; fix the executor's Info method", what, err), true
	}
	msg := err.Error()
	const unrecognized = "Unrecognized remote plugin message: "
	exited := msg == "plugin exited before we could connect"
	switch {
	case strings.HasPrefix(msg, unrecognized):
		line, _, _ := strings.Cut(msg[len(unrecognized):], "\n")
		if line != "" && builtWithSDK(p.spec.Path) {
			return fmt.Errorf("start %s: %w: it printed %q on stdout before the go-plugin handshake, which goes there; "+
				"write nothing to stdout before sdk.Serve; log to stderr%s", what, ErrHandshake, clip(line), note), true
		}
		if line != "" {
			return fmt.Errorf("start %s: %w: it printed %q where the go-plugin handshake was expected; "+
				"an executor must be built with plugins/sdk and call sdk.Serve%s", what, ErrHandshake, clip(line), note), true
		}
		exited = true
	case strings.HasPrefix(msg, "incompatible API version"):
		return fmt.Errorf("start %s: %w: it speaks another executor protocol (%s), this gateway speaks versions %d to %d; "+
			"rebuild it against a matching plugins/sdk", what, ErrHandshake, firstLine(msg), sdk.MinProtocolVersion, p.maxProtocol()), true
	case strings.HasPrefix(msg, "incompatible core API version"),
		strings.HasPrefix(msg, "unsupported plugin protocol"),
		strings.HasPrefix(msg, "error parsing"),
		strings.HasPrefix(msg, "Error parsing"),
		strings.HasPrefix(msg, "unknown address type"):
		return fmt.Errorf("start %s: %w: %s; an executor must be built with plugins/sdk and call sdk.Serve",
			what, ErrHandshake, firstLine(msg)), true
	}
	if exited {
		if refusedCookie(stderr) {
			return fmt.Errorf("start %s: %w: it is a go-plugin plugin that refused the gateway's magic cookie (%s): "+
				"a plugin of another program, or one built with a handshake other than the SDK's; "+
				"an executor must be built with plugins/sdk and call sdk.Serve", what, ErrHandshake, hostside.Handshake().MagicCookieKey), true
		}
		return fmt.Errorf("start %s: %w: it exited before the go-plugin handshake%s", what, ErrHandshake, note), false
	}
	return fmt.Errorf("start %s: %w%s", what, err, note), false
}

// builtWithSDK reports whether the program at path looks like an executor
// built with plugins/sdk: it holds the SDK's magic cookie, which a Go
// binary linking the SDK carries as a string constant. A script or a
// program of another language does not, unless it names the cookie.
func builtWithSDK(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	cookie := []byte(hostside.Handshake().MagicCookieValue)
	buf := make([]byte, 256<<10)
	carry := 0
	for {
		n, err := f.Read(buf[carry:])
		n += carry
		if bytes.Contains(buf[:n], cookie) {
			return true
		}
		if err != nil {
			return false
		}
		// Keep the tail, in case the cookie straddles two reads.
		carry = min(len(cookie)-1, n)
		copy(buf, buf[n-carry:n])
	}
}

// refusedCookie reports whether a plugin that exited before the handshake
// said it was not given its magic cookie, as go-plugin's Serve does.
func refusedCookie(stderr *lineLogger) bool {
	lines, _ := stderr.Tail()
	for _, l := range lines {
		if strings.Contains(l, "This binary is a plugin. These are not meant to be executed directly.") {
			return true
		}
	}
	return false
}

// exitNote describes how a process that failed to start ended, and the last
// thing it wrote to stderr, as " (exit status 1; stderr: \"...\")".
func exitNote(pr *proc, stderr *lineLogger) string {
	var parts []string
	if pr.PID() > 0 {
		t := time.NewTimer(time.Second)
		select {
		case <-pr.exited:
		case <-t.C:
		}
		t.Stop()
		if err, exited := pr.exitErr(); exited && !pr.wasKilled() {
			if err == nil {
				parts = append(parts, "exit status 0")
			} else {
				parts = append(parts, err.Error())
			}
		}
		t = time.NewTimer(exitGrace)
		select {
		case <-pr.copied:
		case <-t.C:
		}
		t.Stop()
	}
	if lines, panicLine := stderr.Tail(); panicLine != "" {
		parts = append(parts, "stderr: "+strconv.Quote(clip(panicLine)))
	} else if len(lines) > 0 {
		parts = append(parts, "stderr: "+strconv.Quote(clip(lines[len(lines)-1])))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
