package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a child process started by Start. It leads its own process
// group; Stop (called by t.Cleanup at the latest) kills the whole group.
type Process struct {
	// Cmd is the started command. Do not call Wait on it; use Done and Err.
	Cmd *exec.Cmd

	name string
	out  *SyncBuffer // nil when the caller set Cmd.Stdout and Cmd.Stderr
	done chan struct{}
	err  error // Cmd.Wait's result; read after done is closed

	stopOnce sync.Once
}

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 3 * time.Second

// Start starts cmd as the leader of a new process group and registers a
// t.Cleanup that kills the group and, if the test failed, logs the process's
// output. Stdout and stderr the caller left nil are captured together and
// returned by Output. A command made with exec.CommandContext has its whole
// group killed when the context ends.
func Start(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, name: filepath.Base(cmd.Path), done: make(chan struct{})}
	if cmd.Stdout == nil || cmd.Stderr == nil {
		p.out = &SyncBuffer{}
		if cmd.Stdout == nil {
			cmd.Stdout = p.out
		}
		if cmd.Stderr == nil {
			cmd.Stderr = p.out
		}
	}
	prepareGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", strings.Join(cmd.Args, " "), err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() && p.out != nil {
			t.Logf("output of %s (pid %d, %v):\n%s", strings.Join(cmd.Args, " "), cmd.Process.Pid, p.err, tail(p.out.Bytes(), 64<<10))
		}
	})
	return p
}

// PID returns the process id, which is also its process group id.
func (p *Process) PID() int { return p.Cmd.Process.Pid }

// Signal sends sig to the process group. On Windows, which has neither
// groups nor signals, SIGKILL kills the process and any other sig fails.
func (p *Process) Signal(sig syscall.Signal) error { return signalGroup(p.PID(), sig) }

// Output returns what the process wrote to the captured stdout and stderr so far.
func (p *Process) Output() []byte {
	if p.out == nil {
		return nil
	}
	return p.out.Bytes()
}

// Done is closed when the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err returns the result of waiting for the process; valid after Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Stop ends the process group: SIGTERM, then SIGKILL after a grace period,
// then waits until no member of the group is left running. It is idempotent
// and returns the error of any member that would not die.
func (p *Process) Stop() error {
	var err error
	p.stopOnce.Do(func() {
		pgid := p.PID()
		_ = killGroup(p.Cmd, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopGrace):
		}
		// Members may outlive the leader; SIGKILL whatever is left.
		_ = killGroup(p.Cmd, syscall.SIGKILL)
		<-p.done
		deadline := time.Now().Add(5 * time.Second)
		for {
			left := GroupPIDs(pgid)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				err = fmt.Errorf("stop %s: process group %d still has %v", p.name, pgid, left)
				return
			}
			_ = killGroup(p.Cmd, syscall.SIGKILL)
			time.Sleep(20 * time.Millisecond)
		}
	})
	return err
}

// WaitTCP waits until addr accepts TCP connections. It fails early when the
// process exits first.
func (p *Process) WaitTCP(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			select {
			case <-p.done:
				return fmt.Errorf("%s exited while %s accepted: %v", p.name, addr, p.err)
			default:
				return nil
			}
		}
		if err := p.pause(deadline, 20*time.Millisecond); err != nil {
			return fmt.Errorf("wait for %s to listen on %s: %w", p.name, addr, err)
		}
	}
}

// WaitOutput waits until the captured output contains s. It fails early when
// the process exits first.
func (p *Process) WaitOutput(s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !bytes.Contains(p.Output(), []byte(s)) {
		if err := p.pause(deadline, 20*time.Millisecond); err != nil {
			return fmt.Errorf("wait for %s to print %q: %w", p.name, s, err)
		}
	}
	return nil
}

// pause sleeps for d, or returns an error when the process exits or the deadline passes.
func (p *Process) pause(deadline time.Time, d time.Duration) error {
	if time.Now().After(deadline) {
		return errors.New("timed out")
	}
	select {
	case <-p.done:
		return fmt.Errorf("process exited: %v", p.err)
	case <-time.After(d):
		return nil
	}
}

// run runs cmd in its own process group, bounded by ctx, and kills what is
// left of the group when it returns (a stdio server a client started, say).
func run(ctx context.Context, cmd *exec.Cmd) error {
	prepareGroup(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = killGroup(cmd, syscall.SIGKILL) })
	defer stop()
	err := cmd.Wait()
	_ = killGroup(cmd, syscall.SIGKILL)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", err, context.Cause(ctx))
	}
	return err
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. Another
// process may take it before the caller binds it, so starters retry.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// SyncBuffer is a bytes.Buffer safe for a writer and readers at once,
// such as a process's stderr that a test reads while it runs.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Bytes returns a copy of the contents.
func (b *SyncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// String returns the contents as a string.
func (b *SyncBuffer) String() string { return string(b.Bytes()) }

// tail returns the last n bytes of b, marked as cut when it is longer.
func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append([]byte("[...]\n"), b[len(b)-n:]...)
}
