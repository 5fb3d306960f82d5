// Package proc runs one child process the way the script executor needs:
// argv only (no shell), its own process group, stdout and stderr drained
// concurrently into bounded buffers (the child never blocks on a full pipe),
// output activity tracked for stall detection, and a stop that sends SIGTERM
// to the group, then SIGKILL. On Linux the signals also reach descendants
// that left the group (setsid, a double fork) by the mark of the process's
// tree in their environment, and whatever is left when the process exits
// is killed, however it exits (see childproc.Group): only a descendant that
// runs with an environment without the mark escapes, which the bubblewrap
// sandbox's PID namespace prevents. On Windows the group is a job object
// and there is no SIGTERM: Stop closes stdin, waits the grace period, then
// kills.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/skillgate/skillgate/internal/childproc"
)

// Config describes a process to start.
type Config struct {
	// Argv is the program and its arguments; Argv[0] is run as it is (a
	// name without a slash is looked up in the executor's PATH).
	Argv []string
	// Env is the complete environment.
	Env []string
	// Dir is the working directory.
	Dir string
	// Stdin, when true, gives the process a pipe on stdin (Process.Stdin);
	// otherwise stdin is /dev/null.
	Stdin bool
	// Stdout and Stderr say what to keep of each stream and whom to tell
	// about its lines.
	Stdout, Stderr Output
	// Credential, when set, runs the process as another user (Unix only:
	// elsewhere Start fails).
	Credential *Credential
	// Grace is how long Stop waits between SIGTERM and SIGKILL
	// (default 2s).
	Grace time.Duration
}

// Credential is the user a process runs as. The process gets no
// supplementary groups of that user: it keeps the executor's.
type Credential struct {
	UID, GID uint32
}

// Output configures one output stream.
type Output struct {
	// Keep is how many bytes are retained; the rest is read and dropped.
	Keep int
	// Tail keeps the last Keep bytes instead of the first.
	Tail bool
	// OnLine, when set, is called with each line (without its newline),
	// cut to MaxLine bytes, in order, from one goroutine. The slice is only
	// valid during the call.
	OnLine func(line []byte, cut bool)
	// MaxLine bounds the lines passed to OnLine (default 64 KiB).
	MaxLine int
}

// Result is what is known about a process once it has exited.
type Result struct {
	// ExitCode is the exit status, or -1 when a signal ended the process.
	ExitCode int
	// Signal is the signal that ended it, if any.
	Signal syscall.Signal
	// Err is an error of waiting other than a non-zero exit.
	Err error
	// Stdout and Stderr are the retained output; StdoutDropped and
	// StderrDropped count the bytes read past the cap.
	Stdout, Stderr               []byte
	StdoutDropped, StderrDropped int64
}

// Process is a started child process; it leads its own process group.
type Process struct {
	cmd   *exec.Cmd
	group *childproc.Group
	stdin io.WriteCloser
	out   *sink
	errw  *sink
	grace time.Duration
	// last is the time of the last output, as UnixNano.
	last atomic.Int64
	done chan struct{}
	res  Result

	stopOnce sync.Once
}

// Start starts the process.
func Start(cfg Config) (*Process, error) {
	if len(cfg.Argv) == 0 {
		return nil, errors.New("start: empty argv")
	}
	cmd := exec.Command(cfg.Argv[0], cfg.Argv[1:]...)
	cmd.Env = cfg.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir = cfg.Dir
	attr, err := sysProcAttr(cfg.Credential)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Argv[0], err)
	}
	cmd.SysProcAttr = attr
	if cmd.Err == nil { // else Start reports why the program was not found
		if err := prepare(cmd); err != nil {
			return nil, fmt.Errorf("start %s: %w", cfg.Argv[0], err)
		}
	}
	// Wait returns this long after the process exits even when a
	// grandchild still holds the output pipes.
	cmd.WaitDelay = 500 * time.Millisecond
	p := &Process{cmd: cmd, grace: cfg.Grace, done: make(chan struct{})}
	if p.grace <= 0 {
		p.grace = 2 * time.Second
	}
	p.out = newSink(cfg.Stdout, &p.last)
	p.errw = newSink(cfg.Stderr, &p.last)
	cmd.Stdout, cmd.Stderr = p.out, p.errw
	if cfg.Stdin {
		w, err := cmd.StdinPipe()
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", cfg.Argv[0], err)
		}
		p.stdin = w
	}
	p.last.Store(time.Now().UnixNano())
	started := make(chan struct{})
	g, err := childproc.Start(cmd, func() {
		<-started
		p.wait()
	})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Argv[0], err)
	}
	p.group = g
	close(started)
	return p, nil
}

func (p *Process) wait() {
	err := p.cmd.Wait()
	// The leader is gone; whatever it left in its group or elsewhere
	// with its mark goes too.
	_ = p.group.Kill()
	_ = p.group.Close()
	p.out.flush()
	p.errw.flush()
	r := Result{ExitCode: p.cmd.ProcessState.ExitCode()}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Signal = ws.Signal()
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		r.Err = err
	}
	r.Stdout, r.StdoutDropped = p.out.kept()
	r.Stderr, r.StderrDropped = p.errw.kept()
	p.res = r
	close(p.done)
}

// PID returns the process id, which is also its process group id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Stdin returns the write end of the process's stdin (nil without
// Config.Stdin).
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Idle returns how long the process has printed nothing, on either stream.
func (p *Process) Idle() time.Duration { return time.Since(time.Unix(0, p.last.Load())) }

// Done is closed once the process has exited and its output is read.
func (p *Process) Done() <-chan struct{} { return p.done }

// Result returns what is known after Done is closed.
func (p *Process) Result() Result {
	<-p.done
	return p.res
}

// Stop ends the process group and the descendants that left it:
// SIGTERM, then SIGKILL after the grace period; it returns once the
// process has exited. It is idempotent.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		if p.stdin != nil {
			_ = p.stdin.Close()
		}
		_ = p.group.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(p.grace):
		}
		_ = p.group.Kill()
	})
	<-p.done
}

// Kill sends SIGKILL to the process group and the descendants that left
// it, and waits for the process.
func (p *Process) Kill() {
	_ = p.group.Kill()
	<-p.done
}

// sink is an io.Writer that keeps a bounded part of what it is given and
// splits it into lines. os/exec copies the pipe into it from one goroutine.
type sink struct {
	cfg  Output
	last *atomic.Int64

	mu      sync.Mutex
	buf     []byte // retained bytes; a ring when Tail
	start   int    // ring start when Tail and full
	dropped int64

	line    []byte // partial line
	lineCut bool
}

func newSink(cfg Output, last *atomic.Int64) *sink {
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = 64 << 10
	}
	return &sink{cfg: cfg, last: last}
}

// Write implements io.Writer; it never fails, so the pipe keeps draining.
func (s *sink) Write(b []byte) (int, error) {
	s.last.Store(time.Now().UnixNano())
	s.keep(b)
	if s.cfg.OnLine != nil {
		s.lines(b)
	}
	return len(b), nil
}

func (s *sink) keep(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.cfg.Keep
	if !s.cfg.Tail {
		room := n - len(s.buf)
		if room > len(b) {
			room = len(b)
		}
		if room > 0 {
			s.buf = append(s.buf, b[:room]...)
		}
		s.dropped += int64(len(b) - max(room, 0))
		return
	}
	if n == 0 {
		s.dropped += int64(len(b))
		return
	}
	if len(b) >= n {
		s.dropped += int64(len(s.buf)) + int64(len(b)-n)
		s.buf = append(s.buf[:0], b[len(b)-n:]...)
		s.start = 0
		return
	}
	for len(b) > 0 {
		if len(s.buf) < n {
			k := min(n-len(s.buf), len(b))
			s.buf = append(s.buf, b[:k]...)
			b = b[k:]
			continue
		}
		k := copy(s.buf[s.start:], b)
		s.dropped += int64(k)
		s.start = (s.start + k) % n
		b = b[k:]
	}
}

func (s *sink) lines(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if room := s.cfg.MaxLine - len(s.line); len(chunk) > room {
			s.line = append(s.line, chunk[:room]...)
			s.lineCut = true
		} else {
			s.line = append(s.line, chunk...)
		}
		if i < 0 {
			return
		}
		s.emit()
		b = b[i+1:]
	}
}

func (s *sink) emit() {
	line := bytes.TrimSuffix(s.line, []byte("\r"))
	s.cfg.OnLine(line, s.lineCut)
	s.line, s.lineCut = s.line[:0], false
}

// flush passes on a last line without a newline.
func (s *sink) flush() {
	if s.cfg.OnLine != nil && len(s.line) > 0 {
		s.emit()
	}
}

func (s *sink) kept() ([]byte, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cfg.Tail || s.start == 0 {
		return append([]byte(nil), s.buf...), s.dropped
	}
	out := make([]byte, 0, len(s.buf))
	out = append(out, s.buf[s.start:]...)
	return append(out, s.buf[:s.start]...), s.dropped
}
