package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skillgate/skillgate/bench/internal/mcpclient"
	"github.com/skillgate/skillgate/gateway/disclosure"
)

// proc is a process the harness started; stop ends it and everything it
// left behind.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// startProc runs bin with args, stderr (and stdout unless captured) to a
// log file in dir.
func startProc(dir, name, bin string, args ...string) (*proc, error) {
	return startProcEnv(dir, name, bin, nil, args...)
}

// startProcEnv is startProc with variables added to the environment.
func startProcEnv(dir, name, bin string, env []string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		_ = cmd.Wait()
		lf.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM, waits up to 10 s for a clean exit (a gateway stops its
// executors and upstreams), then SIGKILLs the process and every descendant
// still alive.
func (p *proc) stop() error {
	desc := descendants(p.pid())
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		err = fmt.Errorf("%s did not exit within 10 s of SIGTERM; killed", p.name)
		killGroup(p.pid())
		<-p.done
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, d := range desc {
		for alive(d) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(d) {
			killPID(d)
			err = errors.Join(err, fmt.Errorf("%s left pid %d behind; killed", p.name, d))
		}
	}
	return err
}

// stopLogged is stop for defer: what went wrong is logged.
func stopLogged(p *proc) {
	if err := p.stop(); err != nil {
		logf("%v", err)
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie has exited; its parent just has not reaped it yet.
	if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// descendants lists every process below pid, by parent links in /proc.
func descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		c := children[queue[0]]
		queue = queue[1:]
		out = append(out, c...)
		queue = append(queue, c...)
	}
	return out
}

// procKiB reads one "Name: N kB" line of a /proc/pid file, in KiB.
func procKiB(pid int, file, field string) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// memKiB is the memory of a set of processes in KiB: rss sums VmRSS, so
// pages they share (the one skillgate binary's code and read-only data,
// mapped by the gateway and every executor) count once per process; pss
// sums the proportional set size, which divides each shared page among the
// processes that map it, so the set's pages count once in all.
type memKiB struct{ rss, pss int }

func memOf(pid int) memKiB {
	return memKiB{rss: procKiB(pid, "status", "VmRSS"), pss: procKiB(pid, "smaps_rollup", "Pss")}
}

// treeMem sums the memory of root and of its descendants running exe (the
// gateway's executors); other descendants (the upstreams) are left out.
// root is root's own share.
func treeMem(root int, exe string) (all, rootMem memKiB, procs int) {
	rootMem = memOf(root)
	all, procs = rootMem, 1
	for _, d := range descendants(root) {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", d)); err == nil && target == exe {
			m := memOf(d)
			all.rss += m.rss
			all.pss += m.pss
			procs++
		}
	}
	return all, rootMem, procs
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// gateway is a running `skillgate run`.
type gateway struct {
	*proc
	url string
}

// startGateway runs `skillgate run -c cfg --listen ADDR` and waits until its
// tools/list (modern era, no session) returns want tools.
func startGateway(ctx context.Context, dir, name, bin, cfg string, want int) (*gateway, error) {
	return startGatewayEnv(ctx, dir, name, bin, cfg, want, nil)
}

// startGatewayEnv is startGateway with variables added to the environment.
func startGatewayEnv(ctx context.Context, dir, name, bin, cfg string, want int, env []string) (*gateway, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p, err := startProcEnv(dir, name, bin, env, "run", "-c", cfg, "--listen", addr)
	if err != nil {
		return nil, err
	}
	g := &gateway{proc: p, url: "http://" + addr + "/mcp"}
	if err := waitTools(ctx, g.url, want, p.done); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: %w (log: %s)", name, err, p.log)
	}
	return g, nil
}

// waitTools polls url until its tools/list returns want tools (besides the
// gateway's meta-tools), done is
// closed (the process exited) or ctx ends. Connections are not reused, so
// the first success is the first moment the gateway could serve.
func waitTools(ctx context.Context, url string, want int, done <-chan struct{}) error {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ep := &mcpclient.Endpoint{URL: url, Era: mcpclient.Modern}
	var last error
	for {
		n, _, err := mcpclient.CountTools(ctx, c, ep)
		n -= len(disclosure.Names)
		if err == nil && n == want {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("%w: %d tools, want %d", mcpclient.ErrNotReady, n, want)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("no full tools/list before the deadline: %w", last)
		case <-done:
			return fmt.Errorf("exited before serving: %w", last)
		case <-time.After(500 * time.Microsecond):
		}
	}
}

// procLine is a proc whose first line of stdout is reported.
type procLine struct {
	*proc
	firstLine <-chan string
}

// startProcStdout is startProc, with the first stdout line sent on
// firstLine and the rest discarded.
func startProcStdout(dir, name, bin string, args ...string) (*procLine, error) {
	logPath := filepath.Join(dir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = lf
	cmd.SysProcAttr = groupAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		lf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	first := make(chan string, 1)
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			first <- strings.TrimSpace(sc.Text())
		}
		for sc.Scan() {
		}
		_ = cmd.Wait()
		lf.Close()
		close(p.done)
	}()
	return &procLine{proc: p, firstLine: first}, nil
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux this runs on.
const clockTicks = 100

// procCPU is the CPU time (user + system) pid has used so far.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// Roles of the processes whose CPU a call costs.
const (
	roleLoad     = "load generator"
	roleGateway  = "gateway"
	roleExecutor = "executor"
	roleUpstream = "upstream"
)

// treeCPU is the CPU time used so far by root (in role rootRole) and each
// process below it, summed per role: a process below root whose command
// line runs `plugin serve` is an executor, any other an upstream.
func treeCPU(root int, rootRole string) map[string]time.Duration {
	out := map[string]time.Duration{rootRole: procCPU(root)}
	for _, p := range descendants(root) {
		role := roleUpstream
		if cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); err == nil && strings.Contains(string(cl), "plugin\x00serve") {
			role = roleExecutor
		}
		out[role] += procCPU(p)
	}
	return out
}
