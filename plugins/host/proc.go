package host

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin/runner"

	"github.com/skillgate/skillgate/internal/childproc"
)

// drainGrace is how long the output pipes may stay open after the plugin
// process exited (a descendant outside its process group may hold them)
// before they are closed under go-plugin's readers.
const drainGrace = 500 * time.Millisecond

// proc runs one plugin process for go-plugin (plugin.ClientConfig.RunnerFunc).
// It exists because go-plugin's own runner kills only the leader, hands the
// child the gateway's stdin (the MCP stream in stdio mode), and notices an
// exit only after every holder of the output pipes is gone. proc instead:
//
//   - starts the child as the leader of a new session and process group,
//     stdin a pipe the gateway never writes, stdout and stderr pipes it owns;
//   - gives the child a mark of its own (childproc.StartMarked), which
//     its descendants inherit;
//   - notices the leader's exit at once, then SIGKILLs the rest of its group
//     and session (killGroup) before reaping the leader, so that neither id
//     can have been reused, and every process that carries its mark (on
//     Linux), however it left: a daemon of an upstream server the executor
//     started, which a crashed or SIGKILLed executor could not stop;
//   - kills the whole group and session, and the leader's descendants, on
//     Kill, no earlier than the deadline set by setDeadline (the kill
//     window of a graceful shutdown).
type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr *lineLogger // the plugin's stderr goes here, not through go-plugin
	copied chan struct{}

	stdinW, stdoutR, stderrR *os.File
	closePipes               sync.Once
	drain                    *time.Timer

	pid    int
	mark   *childproc.Mark // what carries it dies with the leader
	exited chan struct{}   // closed when the leader has been reaped

	mu       sync.Mutex
	killed   bool // a SIGKILL was sent while the leader was not yet reaped
	reaped   bool
	waitErr  error     // the leader's wait status; read after exited is closed
	deadline time.Time // Kill waits for the leader's exit until then
}

var _ runner.Runner = (*proc)(nil)

func newProc(name string, cmd *exec.Cmd, stderr *lineLogger) *proc {
	return &proc{name: name, cmd: cmd, stderr: stderr, exited: make(chan struct{}), copied: make(chan struct{})}
}

// Start implements runner.Runner.
func (p *proc) Start(context.Context) error {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return err
	}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = stdinR, stdoutW, stderrW
	setGroup(p.cmd)
	p.mark, err = childproc.StartMarked(p.cmd)
	closeAll(stdinR, stdoutW, stderrW) // the child has its own copies
	if err != nil {
		closeAll(stdinW, stdoutR, stderrR)
		return err
	}
	p.stdinW, p.stdoutR, p.stderrR = stdinW, stdoutR, stderrR
	p.mu.Lock()
	p.pid = p.cmd.Process.Pid
	if p.killed { // kill came before the process existed
		killGroup(p.pid)
	}
	p.mu.Unlock()
	go p.copyStderr()
	go p.wait()
	return nil
}

// copyStderr logs the plugin's stderr. go-plugin would parse it too, but
// its parser panics on a JSON line whose @message is not a string, and a
// plugin must never be able to take the gateway down.
func (p *proc) copyStderr() {
	defer close(p.copied)
	_, _ = io.Copy(p.stderr, p.stderrR)
	p.stderr.Flush()
}

// wait reaps the leader, killing its group first, and then what carries
// its mark, before it tells that the leader exited.
func (p *proc) wait() {
	if waitExitNoReap(p.pid) == nil {
		p.mu.Lock()
		killGroup(p.pid)
		p.waitErr = p.cmd.Wait()
		p.reaped = true
		p.mu.Unlock()
	} else {
		// No way to wait without reaping here: reap, then kill the group,
		// which a new process could only have taken over in between by
		// getting the same pid and making itself a group leader.
		err := p.cmd.Wait()
		p.mu.Lock()
		killGroup(p.pid)
		p.waitErr = err
		p.reaped = true
		p.mu.Unlock()
	}
	p.mark.Kill() // a pass over /proc: not under mu
	p.drain = time.AfterFunc(drainGrace, p.close)
	close(p.exited)
}

// close closes the gateway's ends of the pipes, which also ends go-plugin's
// readers if a descendant that escaped the group still holds the child's
// ends open.
func (p *proc) close() {
	p.closePipes.Do(func() { closeAll(p.stdinW, p.stdoutR, p.stderrR) })
}

// setDeadline makes Kill wait for the leader to exit on its own until t.
func (p *proc) setDeadline(t time.Time) {
	p.mu.Lock()
	p.deadline = t
	p.mu.Unlock()
}

// kill SIGKILLs the process group and session unless the leader was
// already reaped. A kill before the process started takes effect when it does.
func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return
	}
	p.killed = true
	killGroup(p.pid)
}

// wasKilled reports whether the leader died of a SIGKILL that kill sent.
func (p *proc) wasKilled() bool {
	p.mu.Lock()
	killed := p.killed
	p.mu.Unlock()
	err, exited := p.exitErr()
	var ee *exec.ExitError
	if !killed || !exited || !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(interface{ Signal() syscall.Signal })
	return ok && ws.Signal() == syscall.SIGKILL
}

// exitErr returns the leader's wait status once it has been reaped.
func (p *proc) exitErr() (err error, exited bool) {
	select {
	case <-p.exited:
		return p.waitErr, true
	default:
		return nil, false
	}
}

// Wait implements runner.AttachedRunner. go-plugin calls it after the output
// pipes reached EOF.
func (p *proc) Wait(context.Context) error {
	<-p.exited
	<-p.copied
	p.drain.Stop()
	p.close()
	return p.waitErr
}

// Kill implements runner.AttachedRunner.
func (p *proc) Kill(context.Context) error {
	p.mu.Lock()
	wait, started := time.Until(p.deadline), p.pid > 0
	p.mu.Unlock()
	if wait > 0 && started {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-p.exited:
			return nil
		case <-t.C:
		}
	}
	p.kill()
	return nil
}

// ID implements runner.AttachedRunner. It is empty until the process
// started, which tells go-plugin's Kill there is nothing to kill.
func (p *proc) ID() string {
	pid := p.PID()
	if pid == 0 {
		return ""
	}
	return strconv.Itoa(pid)
}

// PID returns the leader's process id, 0 before it started.
func (p *proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// Stdout implements runner.Runner.
func (p *proc) Stdout() io.ReadCloser { return p.stdoutR }

// Stderr implements runner.Runner. go-plugin gets an empty stream; see
// copyStderr.
func (p *proc) Stderr() io.ReadCloser { return io.NopCloser(strings.NewReader("")) }

// Name implements runner.Runner.
func (p *proc) Name() string { return p.name }

// Diagnose implements runner.Runner; startError explains failures itself.
func (p *proc) Diagnose(context.Context) string { return "" }

// PluginToHost implements runner.AddrTranslator.
func (p *proc) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

// HostToPlugin implements runner.AddrTranslator.
func (p *proc) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}
