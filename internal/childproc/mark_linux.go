package childproc

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// mark is the variable that marks one child's tree (see TreeEnvPrefix),
// with the users whose processes may be signalled for carrying it.
type mark struct {
	prefix string   // the entry up to its value: "SKILLGATE_TREE_<hex>="
	uids   []uint32 // this process's and, when it runs as another, the child's
	// start is when the child started (see Proc.Start), 0 if unknown: a
	// process that started before it is no descendant, and its
	// environment is not read. Reading one waits for the process's memory
	// map lock, which a process stuck in a page fault holds.
	start uint64
	pid   int       // the child's, 0 if unknown (see candidates)
	at    time.Time // when rooted saw the child
}

// markTree gives cmd, before it starts, a new mark and the marks this
// process carries.
func markTree(cmd *exec.Cmd) *mark {
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails
	name := TreeEnvPrefix + hex.EncodeToString(id[:])
	env := cmd.Env
	if env == nil {
		env = cmd.Environ() // what the child would get: this process's environment
	}
	env = slices.Clip(env)
	for _, kv := range treeMarks(os.Environ()) {
		if !slices.Contains(env, kv) {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, name+"=1")
	m := &mark{prefix: name + "=", uids: []uint32{uint32(os.Geteuid())}}
	if a := cmd.SysProcAttr; a != nil && a.Credential != nil && a.Credential.Uid != m.uids[0] {
		m.uids = append(m.uids, a.Credential.Uid)
	}
	return m
}

// rooted records when the child, pid, started; it has not been reaped.
func (m *mark) rooted(pid int) {
	if m == nil {
		return
	}
	m.pid, m.at = pid, time.Now()
	if p, ok := process(pid); ok {
		m.start = p.Start
	}
}

// signal sends sig to every process that carries the mark, but this one,
// and, unless sig is SIGKILL, those of process group pgid, which a signal
// to the group reached. Nothing happens for a nil mark.
func (m *mark) signal(pgid int, sig syscall.Signal) {
	if m != nil {
		m.pass(pgid, sig, map[int]bool{})
	}
}

// kill SIGKILLs every process that carries the mark, but this one. A
// victim may fork while it is being killed, so it looks again until a pass
// finds no one new (see KillAll).
func (m *mark) kill() {
	if m == nil {
		return
	}
	done := map[int]bool{}
	for range 20 {
		if !m.pass(0, syscall.SIGKILL, done) {
			return
		}
	}
}

// pass signals the processes in /proc that carry the mark, are not in
// done and, for sig other than SIGKILL, not in process group pgid; it adds
// them to done and reports whether there was one. It reads the
// environment of the live processes of m's users that started with or
// after the child, as far as this process may (its own user's, or all as
// root).
func (m *mark) pass(pgid int, sig syscall.Signal, done map[int]bool) bool {
	self := os.Getpid()
	buf := make([]byte, 16<<10)
	fresh := false
	for _, p := range m.candidates() {
		if p.PID == self || done[p.PID] || p.Start < m.start || !p.Live() ||
			sig != syscall.SIGKILL && p.PGID == pgid || !m.owns(p.PID) {
			continue
		}
		var carries bool
		if buf, carries = m.carried(p.PID, buf); carries && m.signalCarrier(p.PID, sig, buf) {
			done[p.PID] = true
			fresh = true
		}
	}
	return fresh
}

// owns reports whether pid belongs to one of m's users.
func (m *mark) owns(pid int) bool {
	var st syscall.Stat_t
	return syscall.Stat("/proc/"+strconv.Itoa(pid), &st) == nil && slices.Contains(m.uids, st.Uid)
}

// signalCarrier sends sig to pid if it still carries the mark. It holds
// the process by a pidfd (Linux 5.3 and later) while it checks: if pid
// went to another process after the check, the signal goes nowhere rather
// than to that one.
func (m *mark) signalCarrier(pid int, sig syscall.Signal, buf []byte) bool {
	p, err := os.FindProcess(pid) // never reaps: it only opens a pidfd
	if err != nil {
		return false
	}
	defer p.Release()
	if _, carries := m.carried(pid, buf); !carries {
		return false
	}
	return p.Signal(sig) == nil
}

// carried reads /proc/PID/environ into buf (grown as needed, and returned)
// and reports whether it holds the mark.
func (m *mark) carried(pid int, buf []byte) ([]byte, bool) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/environ", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return buf, false
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		k, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, false
		}
		if k == 0 {
			break
		}
		n += k
	}
	return buf, environHas(buf[:n], m.prefix)
}
