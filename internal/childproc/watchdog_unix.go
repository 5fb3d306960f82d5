//go:build unix

package childproc

import (
	"bufio"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// envWatchdog makes a binary that links this package a watchdog (see
// runWatchdog) instead of running its main.
const envWatchdog = "SKILLGATE_CHILDPROC_WATCHDOG"

func init() {
	if os.Getenv(envWatchdog) == "1" {
		// The signals a terminal sends its whole foreground group: Ctrl-C
		// must not take the watchdog down before the process it watches.
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
		runWatchdog(os.Stdin)
		os.Exit(0)
	}
}

// runWatchdog is the watchdog process: where the kernel has no
// parent-death signal (macOS), nothing ends a child when the process that
// started it is killed with SIGKILL and runs no code. The watchdog is a
// second process, started by that one with a pipe on its stdin, over
// which it hears of the process groups its children lead ("+PGID" and
// "-PGID" lines). When the pipe closes, its starter is gone, however it
// ended: the watchdog SIGKILLs the groups it still holds, as Pdeathsig
// would have killed the children, and exits.
func runWatchdog(in *os.File) {
	groups := map[int]bool{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(line[1:])
		if err != nil || pgid <= 1 {
			continue
		}
		switch line[0] {
		case '+':
			groups[pgid] = true
		case '-':
			delete(groups, pgid)
		}
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// watchdog is the starter's side of runWatchdog: it starts the watchdog
// on first use and tells it of groups as they come and go. A watchdog
// that cannot be started, or died, is started again at the next change,
// and told every group held. Methods are safe for concurrent use.
type watchdog struct {
	mu     sync.Mutex
	groups map[int]bool
	w      *os.File // nil while no watchdog runs
}

// add starts watching the process group pgid.
func (d *watchdog) add(pgid int) { d.change('+', pgid) }

// remove stops watching pgid, once its leader was reaped.
func (d *watchdog) remove(pgid int) { d.change('-', pgid) }

func (d *watchdog) change(op byte, pgid int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.groups == nil {
		d.groups = map[int]bool{}
	}
	if op == '+' {
		d.groups[pgid] = true
	} else {
		delete(d.groups, pgid)
	}
	line := string(op) + strconv.Itoa(pgid) + "\n"
	if d.w == nil {
		if op == '-' || d.start() != nil {
			return
		}
		line = d.all()
	}
	if _, err := d.w.WriteString(line); err != nil {
		_ = d.w.Close()
		d.w = nil // it died; a later change starts another
	}
}

// all lists every group held, as "+PGID" lines.
func (d *watchdog) all() string {
	pgids := make([]int, 0, len(d.groups))
	for pgid := range d.groups {
		pgids = append(pgids, pgid)
	}
	slices.Sort(pgids)
	var b strings.Builder
	for _, pgid := range pgids {
		b.WriteString("+" + strconv.Itoa(pgid) + "\n")
	}
	return b.String()
}

// start runs this binary again as the watchdog, in a process group of its
// own (a signal to this process's group does not reach it), with an
// environment of its variable alone.
func (d *watchdog) start() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        []string{exe},
		Env:         []string{envWatchdog + "=1"},
		Stdin:       r,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		return err
	}
	go func() { _ = cmd.Wait() }() // it exits once w closes
	d.w = w
	return nil
}
