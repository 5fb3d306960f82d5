//go:build linux || darwin

package childproc

import (
	"slices"
	"sync"
	"syscall"
)

// Proc is what the process table (/proc/PID/stat on Linux, the kern.proc
// sysctl on macOS) says about a process that this package's users need.
type Proc struct {
	PID, PPID, PGID, SID int
	// State is the state letter: R, S, D, T, Z (exited, not reaped), ...
	// (macOS's states are given the same letters).
	State byte
	// Start is when the process started, in clock ticks after boot on
	// Linux, in microseconds of the Unix epoch on macOS. A pid taken over
	// by a later process comes with another Start.
	Start uint64
}

// Live reports whether the process has not exited (zombies have).
func (p Proc) Live() bool { return p.State != 'Z' && p.State != 'X' }

// Below returns the descendants of roots among ps, found by their parent
// links; roots themselves are not included unless one descends from
// another.
func Below(ps []Proc, roots ...int) map[int]bool {
	kids := map[int][]int{}
	for _, p := range ps {
		kids[p.PPID] = append(kids[p.PPID], p.PID)
	}
	below := map[int]bool{}
	var queue []int
	for _, r := range roots {
		queue = append(queue, kids[r]...)
	}
	for ; len(queue) > 0; queue = queue[1:] {
		if pid := queue[0]; !below[pid] {
			below[pid] = true
			queue = append(queue, kids[pid]...)
		}
	}
	return below
}

// KillAll SIGKILLs the processes pick chooses from a fresh read of the
// process table (see Processes). A
// victim may fork while it is being killed, so it looks again until a pass
// finds no one new. That takes a few passes at most: a process with a
// SIGKILL pending can no longer fork, so each pass only finds children
// forked before the previous one's kill.
func KillAll(pick func([]Proc) []int) {
	killed := map[int]bool{}
	for range 20 {
		fresh := false
		for _, pid := range pick(Processes()) {
			if !killed[pid] {
				killed[pid] = true
				fresh = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if !fresh {
			return
		}
	}
}

// Tree keeps track of the descendants of a child process, so that they can
// still be signalled once the child is gone: when a process dies, its
// children are re-parented (to init or launchd, or to the nearest child
// subreaper) and nothing in the process table ties them to it any more. A descendant that started
// a session or a process group of its own is found all the same, as long
// as it was seen: call Scan while the child runs, before each step that
// may end it. Processes are told apart by their start time, so a pid taken
// over by an unrelated process is never signalled. A descendant orphaned
// before any Scan (a double fork whose middle exited at once) is never
// seen here: the mark of the child's Group finds it (see Group). Methods
// are safe for concurrent use.
type Tree struct {
	root      int
	rootStart uint64 // 0 if the root could not be read

	mu   sync.Mutex
	seen map[int]uint64 // descendant pid -> its start time
}

// NewTree starts tracking the descendants of pid, a child that has not been
// reaped yet.
func NewTree(pid int) *Tree {
	t := &Tree{root: pid, seen: map[int]uint64{}}
	if p, ok := process(pid); ok {
		t.rootStart = p.Start
	}
	return t
}

// Scan records the descendants the child has now, and those of the
// descendants recorded before that still run.
func (t *Tree) Scan() { t.scan(Processes()) }

// Signal scans, then sends sig to every recorded descendant that still
// runs. It does not signal the child itself.
func (t *Tree) Signal(sig syscall.Signal) {
	for _, pid := range t.scan(Processes()) {
		_ = syscall.Kill(pid, sig)
	}
}

// Kill SIGKILLs every recorded descendant that still runs, and what they
// fork meanwhile (see KillAll). It does not kill the child itself.
func (t *Tree) Kill() { KillAll(t.scan) }

// scan updates the record from ps and returns the recorded descendants
// that still run.
func (t *Tree) scan(ps []Proc) []int {
	byPID := make(map[int]Proc, len(ps))
	for _, p := range ps {
		byPID[p.PID] = p
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	roots := make([]int, 0, len(t.seen)+1)
	if p, ok := byPID[t.root]; ok && t.rootStart != 0 && p.Start == t.rootStart {
		roots = append(roots, t.root)
	}
	for pid, start := range t.seen {
		if p, ok := byPID[pid]; ok && p.Start == start {
			roots = append(roots, pid)
		} else {
			delete(t.seen, pid) // gone, or a stranger under its pid
		}
	}
	for pid := range Below(ps, roots...) {
		if pid != t.root {
			t.seen[pid] = byPID[pid].Start
		}
	}
	live := make([]int, 0, len(t.seen))
	for pid := range t.seen {
		if byPID[pid].Live() {
			live = append(live, pid)
		}
	}
	slices.Sort(live)
	return live
}
