package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/skillgate/skillgate/internal/childproc"
	"github.com/skillgate/skillgate/internal/jsonscan"
	"github.com/skillgate/skillgate/internal/redact"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// Limits of the stdio wire. Variables so tests can lower them.
var (
	// maxMessageBytes is the longest line accepted from an upstream's stdout.
	// A longer line is skipped; a response among them fails its call.
	maxMessageBytes = 32 << 20
	// stdinStall is how long a write to the upstream's stdin may make no
	// progress before the upstream is declared stuck and killed (at least
	// 7/8 of it: the deadline is moved only when an eighth has passed).
	stdinStall = 5 * time.Second
	// drainWait is how long the wire waits, after the upstream exited, for
	// the rest of its output before closing the pipes.
	drainWait = time.Second
)

const (
	maxStderrLine = 4 << 10 // longer stderr lines are cut when logged
	stderrTail    = 8       // stderr lines kept for failure reasons
	stderrTailLen = 300     // bytes kept of each of those lines
)

// stdioWire runs a stdio MCP server as a child process in its own process
// group and speaks newline-delimited JSON-RPC with it. Every signal that
// stops the server goes to its process group and to its other descendants
// (see tree).
//
// mcp-go's transport.Stdio is not used: it reads lines without a bound,
// writes stdin without a deadline while holding its write lock (an upstream
// that stops reading blocks every sender), only reaps the child in Close (so
// a crash is never noticed), signals the leader rather than the group with
// fixed 2s/3s timers, and decodes params of server requests into maps.
type stdioWire struct {
	log   *slog.Logger
	h     wireHandlers
	grace time.Duration
	// secrets are masked in the lines the server writes on stderr and
	// stdout as they arrive, before they are cut, kept or logged.
	secrets redact.Secrets
	// stopBy, when it returns a time, is when close must have killed the
	// server at the latest: a grace that would end later is shortened.
	stopBy func() time.Time
	// tree follows the server's descendants, which a signal to its process
	// group misses once they moved to a group or session of their own, and
	// which nothing ties to the server any more once it died.
	tree *childproc.Tree
	// group is the server's process group (a job object on Windows).
	group *childproc.Group

	cmd    *exec.Cmd
	stdin  *os.File // write end, ours
	stdout *os.File // read end, ours
	stderr *os.File // read end, ours

	ctx    context.Context // ends when the wire dies; server requests run under it
	cancel context.CancelFunc

	writeMu sync.Mutex
	// stdinDeadline is the write deadline last set on stdin (under
	// writeMu); see write.
	stdinDeadline time.Time

	calls calls

	mu   sync.Mutex
	tail []string // last stderr lines
	// firstErr is the first stderr line that names an error: a runtime's
	// report (Node's "Error: Cannot find module ...") often comes before
	// more lines of stack than the tail keeps.
	firstErr string
	// junk is the first line on stdout that is not JSON-RPC (a banner, a
	// log line): it tells why a server that never answers does not.
	junk string

	death
	exited    chan struct{} // closed once the child was reaped
	finished  chan struct{} // closed once every goroutine of the wire ended
	readDone  chan struct{}
	errDone   chan struct{}
	closing   atomic.Bool
	closeOnce sync.Once

	garbage limiter
}

// startStdio launches spec's command and starts reading from it. stopBy
// may be nil.
func startStdio(spec *Spec, log *slog.Logger, h wireHandlers, stopBy func() time.Time) (*stdioWire, error) {
	cmd, err := command(spec, childEnv(spec.Environ, spec.Env))
	if err != nil {
		return nil, err
	}
	inR, inW, err := stdinPipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	var w *stdioWire
	built := make(chan struct{})
	group, err := childproc.Start(cmd, func() {
		<-built
		w.waitLoop()
	})
	closeAll(inR, outW, errW) // the child holds its own copies
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, fmt.Errorf("start %s: %w", spec.Command, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w = &stdioWire{
		log: log.With("pid", cmd.Process.Pid), h: h, grace: time.Duration(spec.ShutdownGrace), stopBy: stopBy,
		secrets: spec.secrets(), tree: childproc.NewTree(cmd.Process.Pid), group: group,
		cmd: cmd, stdin: inW, stdout: outR, stderr: errR,
		ctx: ctx, cancel: cancel,
		death: death{ch: make(chan struct{})}, exited: make(chan struct{}), finished: make(chan struct{}),
		readDone: make(chan struct{}), errDone: make(chan struct{}),
		garbage: limiter{per: 5},
	}
	go w.readLoop()
	go w.stderrLoop()
	close(built)
	return w, nil
}

func (w *stdioWire) pid() int                    { return w.cmd.Process.Pid }
func (w *stdioWire) setProtocolVersion(_ string) {}

// die marks the wire dead with cause (the first cause wins) and fails every
// pending request.
func (w *stdioWire) die(cause error) {
	if w.mark(cause) {
		w.cancel()
	}
}

func (w *stdioWire) roundTrip(ctx context.Context, req *rpcRequest) (*rpcResponse, error) {
	ch := respChans.Get().(chan *rpcResponse)
	w.calls.add(req.id, ch)
	defer w.calls.remove(req.id)

	bp := lineBufs.Get().(*[]byte)
	line := append((*bp)[:0], `{"jsonrpc":"2.0","id":`...)
	line = strconv.AppendInt(line, req.id, 10)
	line = append(line, `,"method":`...)
	line = jsonscan.AppendString(line, req.method)
	var err error
	if len(req.params) > 0 {
		line = append(line, `,"params":`...)
		if line, err = appendOneLine(line, req.params); err != nil {
			err = &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "params are not valid JSON: " + err.Error()}
		}
	}
	if err == nil {
		err = w.write(append(line, "}\n"...))
	}
	if cap(line) <= maxPooledLine {
		*bp = line
		lineBufs.Put(bp)
	}
	if err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		respChans.Put(ch) // delivered once, and no longer pending
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err() // ch is dropped: a late answer may still land in it
	case <-w.dead():
		select {
		case resp := <-ch: // it answered just before dying
			return resp, nil
		default:
		}
		return nil, w.cause()
	}
}

// Buffers of roundTrip: request lines (up to maxPooledLine kept for
// reuse) and answer channels (reused only once their answer was taken).
var (
	lineBufs  = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}
	respChans = sync.Pool{New: func() any { return make(chan *rpcResponse, 1) }}
)

const maxPooledLine = 64 << 10

func (w *stdioWire) notify(_ context.Context, method string, params json.RawMessage) error {
	line := append([]byte(`{"jsonrpc":"2.0","method":`), jsonscan.AppendString(nil, method)...)
	if len(params) > 0 {
		line = append(line, `,"params":`...)
		var err error
		if line, err = appendOneLine(line, params); err != nil {
			return err
		}
	}
	return w.write(append(line, "}\n"...))
}

// write writes one frame. A write that makes no progress for stdinStall
// means the upstream stopped reading: it is killed, since a half-written
// frame cannot be taken back anyway.
func (w *stdioWire) write(frame []byte) error {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	if err := w.cause(); err != nil {
		return err
	}
	for len(frame) > 0 {
		// Moving the deadline costs a timer update; at thousands of writes
		// a second it moves only when an eighth of the period has passed.
		if now := time.Now(); w.stdinDeadline.Sub(now) < stdinStall-stdinStall/8 {
			w.stdinDeadline = now.Add(stdinStall)
			if err := w.stdin.SetWriteDeadline(w.stdinDeadline); err != nil {
				return err
			}
		}
		n, err := w.stdin.Write(frame)
		frame = frame[n:]
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && n > 0 {
			continue // progress was made; give it another period
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.die(fmt.Errorf("upstream stopped reading its stdin (a write made no progress for over %s)", stdinStall-stdinStall/8))
			w.signal(syscall.SIGKILL)
			return w.cause()
		}
		// A pipe refuses writes only when its reader is gone: the upstream
		// exited or closed its stdin. Wait for the reason it died.
		select {
		case <-w.dead():
		case <-time.After(drainWait + 2*time.Second):
			w.die(fmt.Errorf("writing to the upstream's stdin failed: %w", err))
			w.signal(syscall.SIGKILL)
		}
		return w.cause()
	}
	return nil
}

// envelope is any JSON-RPC message; the parts stay raw.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// parseEnvelope reads one line of the upstream as encoding/json would
// decode it into an envelope, with one validity check and one walk of the
// top level instead of a reflective decode (every message of every
// upstream comes through here). The parts are copies: line is the
// reader's buffer. Keys match exactly, as JSON-RPC spells them. It
// reports false for anything that is not a JSON object or whose method is
// not a string.
func parseEnvelope(line []byte) (envelope, bool) {
	var m envelope
	if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
		return m, false
	}
	ok := true
	jsonscan.Members(line, func(key, value []byte, _, _ int) {
		switch string(key) {
		case "id":
			m.ID = value
		case "method":
			switch {
			case string(value) == "null":
				m.Method = ""
			case value[0] != '"':
				ok = false
			case bytes.IndexByte(value, '\\') < 0:
				m.Method = string(value[1 : len(value)-1])
			default:
				ok = json.Unmarshal(value, &m.Method) == nil && ok
			}
		case "params":
			m.Params = value
		case "result":
			m.Result = value
		case "error":
			m.Error = value
		}
	})
	if !ok {
		return envelope{}, false
	}
	for _, p := range []*json.RawMessage{&m.ID, &m.Params, &m.Result, &m.Error} {
		if *p != nil {
			*p = bytes.Clone(*p)
		}
	}
	return m, true
}

func (w *stdioWire) readLoop() {
	defer close(w.readDone)
	lr := &lineReader{r: bufio.NewReaderSize(w.stdout, 64<<10), max: maxMessageBytes}
	for {
		line, size, skipped, err := lr.next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				w.log.Warn("reading upstream stdout failed", "err", err)
			}
			// The child normally exits right after; if it does not,
			// it closed stdout on its own and is of no more use.
			go func() {
				select {
				case <-w.exited:
				case <-time.After(drainWait):
					w.die(errors.New("upstream closed its stdout but kept running"))
					w.signal(syscall.SIGKILL)
				}
			}()
			return
		}
		if skipped {
			w.skipped(line, size)
			continue
		}
		w.dispatch(line)
	}
}

// skipped handles a line over the size limit: if it looks like a response,
// its call fails with a clear error instead of waiting for a timeout.
func (w *stdioWire) skipped(prefix []byte, size int) {
	logLimited(w.log, &w.garbage, slog.LevelWarn, "upstream wrote a line over the size limit on stdout; skipped it",
		"bytes", size, "limit", maxMessageBytes, "start", truncate(w.secrets.MaskCut(w.maskText(string(prefix))), 120))
	id, ok := sniffResponseID(prefix)
	if !ok {
		return
	}
	w.calls.deliver(id, &rpcResponse{err: &sdk.RPCError{
		Code:    sdk.CodeInternalError,
		Message: fmt.Sprintf("the upstream's response is %d bytes, over the %d-byte limit", size, maxMessageBytes),
	}})
}

func (w *stdioWire) dispatch(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	m, ok := parseEnvelope(line)
	if !ok {
		text := w.maskText(string(line))
		w.mu.Lock()
		if w.junk == "" {
			w.junk = truncate(text, 200)
		}
		w.mu.Unlock()
		logLimited(w.log, &w.garbage, slog.LevelWarn, "upstream wrote a line that is not JSON-RPC on stdout; ignored it",
			"line", truncate(text, 200))
		return
	}
	if !route(m, w.h, w) {
		logLimited(w.log, &w.garbage, slog.LevelWarn, "upstream wrote a JSON object that is not JSON-RPC; ignored it",
			"line", truncate(string(w.secrets.MaskJSON(line)), 200))
	}
}

// answer delivers a response to its request.
func (w *stdioWire) answer(m envelope) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		logLimited(w.log, &w.garbage, slog.LevelWarn, "upstream answered with an id it was never sent; ignored it", "id", truncate(string(m.ID), 80))
		return
	}
	switch {
	case w.calls.deliver(id, responseOf(m)):
	case w.calls.late(id):
		w.log.Debug("upstream answered a request the gateway no longer waits for; ignored it", "id", id)
	default:
		logLimited(w.log, &w.garbage, slog.LevelWarn, "upstream answered with an id it was never sent; ignored it", "id", id)
	}
}

// serve answers one server-to-client request.
func (w *stdioWire) serve(id json.RawMessage, method string, params json.RawMessage) {
	res, err := w.h.request(w.ctx, method, params)
	line := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	if err != nil {
		e := asRPCError(err)
		b, _ := json.Marshal(e)
		line = append(append(line, `,"error":`...), b...)
	} else {
		if len(res) == 0 {
			res = json.RawMessage(`{}`)
		}
		var cerr error
		line = append(line, `,"result":`...)
		if line, cerr = appendOneLine(line, res); cerr != nil {
			line = append([]byte(`{"jsonrpc":"2.0","id":`), id...)
			line = append(line, `,"error":{"code":-32603,"message":"the client's answer was not valid JSON"}`...)
		}
	}
	if err := w.write(append(line, "}\n"...)); err != nil && w.cause() == nil {
		level := slog.LevelWarn
		if errors.Is(err, os.ErrClosed) || w.closing.Load() {
			level = slog.LevelDebug // we are stopping the upstream
		}
		w.log.Log(w.ctx, level, "answering the upstream's request failed", "method", method, "err", err)
	}
}

func (w *stdioWire) stderrLoop() {
	defer close(w.errDone)
	lr := &lineReader{r: bufio.NewReaderSize(w.stderr, 4<<10), max: maxStderrLine}
	for {
		line, size, skipped, err := lr.next()
		if err != nil {
			return
		}
		text := strings.TrimRight(string(line), "\r\n")
		text = w.maskText(text)
		if skipped {
			text = w.secrets.MaskCut(text) + fmt.Sprintf("%s%d bytes)", cutMark, size)
		}
		if text == "" {
			continue
		}
		w.log.Info(text, "stream", "stderr")
		w.mu.Lock()
		if len(w.tail) == stderrTail {
			w.tail = w.tail[1:]
		}
		w.tail = append(w.tail, truncate(text, stderrTailLen))
		if w.firstErr == "" && errorLine(text) {
			w.firstErr = truncate(text, stderrTailLen)
		}
		w.mu.Unlock()
	}
}

// maskText masks the secrets in a line the server wrote, both as they are
// and as they are spelled inside a JSON string (a server that logs JSON
// writes "a\"b" for a"b and, with some encoders, \u0026 for &).
func (w *stdioWire) maskText(text string) string {
	return w.secrets.Mask(string(w.secrets.MaskJSON([]byte(text))))
}

// waitLoop reaps the child and turns its exit into the wire's death.
func (w *stdioWire) waitLoop() {
	defer close(w.finished)
	err := w.cmd.Wait()
	close(w.exited)
	// Whatever the leader left behind in its group goes with it, and so do
	// the descendants seen while it ran (only a stop looks for them).
	_ = w.group.Kill()
	_ = w.group.Close()
	w.tree.Kill()
	// Let the readers take what the child wrote before it exited; a
	// grandchild that escaped the group may hold the pipes open.
	for _, done := range []struct {
		ch <-chan struct{}
		f  *os.File
	}{{w.readDone, w.stdout}, {w.errDone, w.stderr}} {
		select {
		case <-done.ch:
		case <-time.After(drainWait):
			_ = done.f.Close()
			<-done.ch
		}
	}
	if w.closing.Load() {
		w.die(errors.New("upstream stopped"))
	} else {
		w.die(fmt.Errorf("upstream exited (%s)%s", exitReason(err, w.cmd.ProcessState), w.stderrTail()))
	}
	closeAll(w.stdin, w.stdout, w.stderr)
}

// stderrTail renders the last stderr lines for a failure reason.
func (w *stdioWire) stderrTail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.tail) == 0 {
		return "; it wrote nothing on stderr"
	}
	first := ""
	if w.firstErr != "" && !slices.Contains(w.tail, w.firstErr) {
		first = "; first error on stderr: " + w.firstErr
	}
	return first + "; last stderr: " + strings.Join(w.tail, " | ")
}

// stdoutJunk is the first line the upstream wrote on stdout that is not
// JSON-RPC, or "".
func (w *stdioWire) stdoutJunk() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.junk
}

// errorLine reports whether a stderr line names an error, in the words
// runtimes and loggers use.
func errorLine(s string) bool {
	l := strings.ToLower(s)
	for _, w := range []string{"error", "fatal", "panic", "exception", "traceback"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// signal sends sig to the child's process group and its other
// descendants while the leader is not reaped (after that its pid may be
// reused). The descendants are looked for first: once the leader dies of
// sig, they can no longer be told from anyone else's.
func (w *stdioWire) signal(sig syscall.Signal) {
	select {
	case <-w.exited:
	default:
		w.tree.Scan()
		_ = w.group.Signal(sig)
		if sig == syscall.SIGKILL {
			w.tree.Kill()
		} else {
			w.tree.Signal(sig)
		}
	}
}

// close shuts the child down: stdin is closed, SIGTERM goes to its group
// and its other descendants halfway through the grace period, and SIGKILL
// at its end (or as soon as the leader exited, see waitLoop). The grace is
// shortened to end by stopBy's time.
func (w *stdioWire) close() error {
	w.closeOnce.Do(func() {
		w.closing.Store(true)
		// A server that exits on EOF orphans its descendants: look first.
		w.tree.Scan()
		_ = w.stdin.Close()
		grace := w.grace
		if w.stopBy != nil {
			if by := w.stopBy(); !by.IsZero() && time.Until(by) < grace {
				grace = max(time.Until(by), 0)
				w.log.Warn("upstream's shutdown_grace ends after the time its executor has to stop it; shortened",
					"shutdown_grace", w.grace.String(), "shortened_to", grace.Round(time.Millisecond).String())
			}
		}
		half := grace / 2
		if !waitFor(w.exited, half) {
			w.signal(syscall.SIGTERM)
			if !waitFor(w.exited, grace-half) {
				w.log.Warn("upstream did not exit in time; killing it", "grace", grace.String())
				w.signal(syscall.SIGKILL)
			}
		}
	})
	<-w.finished
	return nil
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// exitReason describes how a child ended.
func exitReason(err error, ps *os.ProcessState) string {
	if ps == nil {
		return err.Error()
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%s)", ws.Signal(), signalName(ws.Signal()))
	}
	return "exit status " + strconv.Itoa(ps.ExitCode())
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// lineReader reads newline-terminated lines of at most max bytes. A longer
// line is consumed and reported as skipped, with its first bytes.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

const skippedPrefix = 512

func (l *lineReader) next() (line []byte, size int, skipped bool, err error) {
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not hold on to one big message forever
	}
	l.buf = l.buf[:0]
	for {
		frag, err := l.r.ReadSlice('\n')
		size += len(frag)
		if !skipped && len(l.buf)+len(frag) > l.max {
			skipped = true
			if keep := skippedPrefix - len(l.buf); keep > 0 {
				l.buf = append(l.buf, frag[:min(keep, len(frag))]...)
			}
			if len(l.buf) > skippedPrefix {
				l.buf = l.buf[:skippedPrefix]
			}
		} else if !skipped {
			l.buf = append(l.buf, frag...)
		}
		switch {
		case err == nil:
			return l.buf, size, skipped, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && size > 0:
			return l.buf, size, skipped, nil // a last line without newline
		default:
			return nil, size, skipped, err
		}
	}
}

// sniffResponseID finds the id of a response from the start of its line.
func sniffResponseID(prefix []byte) (int64, bool) {
	if bytes.Contains(prefix, []byte(`"method"`)) {
		return 0, false
	}
	i := bytes.Index(prefix, []byte(`"id"`))
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(prefix[i+4:], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return 0, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	end := 0
	for end < len(rest) && (rest[end] >= '0' && rest[end] <= '9' || end == 0 && rest[end] == '-') {
		end++
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return id, err == nil
}

// appendOneLine appends raw JSON, compacting it when it spans lines (a
// newline would end the frame).
func appendOneLine(dst []byte, raw json.RawMessage) ([]byte, error) {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, raw...), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}
