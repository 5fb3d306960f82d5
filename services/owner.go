package services

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Ownership between processes. Several skillgate processes may use one
// project at once: gateway replicas behind a load balancer, or a one-shot
// `skillgate call` next to a running gateway. Each manager has an owner id
// (NewOwner) naming its process; the containers it creates carry it
// (LabelOwner), and while it uses the project's services it keeps a
// presence marker on the engine: a volume labelled RolePresence that holds
// no data. A manager's Close removes the service containers it created,
// and those whose owner is gone, only when no other live owner's marker is
// left: the last process out cleans up. An owner is gone when its marker
// is, or when its process provably no longer runs (same machine and boot,
// no process with its pid and start time): a gateway killed with -9.
// Containers without an owner (made by `skillgate services up`, or by
// versions before owners) are never removed on shutdown.

var ownerSeq atomic.Uint64

// owner is a parsed owner id: "host/pid/seq/start/boot/machine/pidns".
// Every field but host, pid and seq may be empty where the platform does
// not tell (then the process is never provably gone).
type owner struct {
	host, start, boot, machine, pidns string
	pid                               int
	seq                               uint64
}

func (o owner) String() string {
	return strings.Join([]string{o.host, strconv.Itoa(o.pid), strconv.FormatUint(o.seq, 10), o.start, o.boot, o.machine, o.pidns}, "/")
}

func parseOwner(id string) (owner, bool) {
	f := strings.Split(id, "/")
	if len(f) != 7 {
		return owner{}, false
	}
	pid, err1 := strconv.Atoi(f[1])
	seq, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || f[0] == "" {
		return owner{}, false
	}
	return owner{host: f[0], pid: pid, seq: seq, start: f[3], boot: f[4], machine: f[5], pidns: f[6]}, true
}

// self is this process's identity, read once.
var self = sync.OnceValue(func() owner {
	host, _ := os.Hostname()
	host = unsafeRe().ReplaceAllString(host, "_")
	if host == "" {
		host = "unknown"
	}
	o := owner{host: host, pid: os.Getpid()}
	o.start, o.boot, o.machine, o.pidns = processIdentity(o.pid)
	return o
})

// NewOwner returns a new owner id for a Manager of this process
// (Options.Owner): what the manager creates is labelled with it, and other
// processes tell from it whether this one still runs. A gateway uses one
// for its whole life, across config reloads.
func NewOwner() string {
	o := self()
	o.seq = ownerSeq.Add(1)
	return o.String()
}

// processGone reports whether the process of owner id provably no longer
// runs. An id of another machine, or one this platform cannot check, is
// never gone: its containers are left alone.
func processGone(id string) bool {
	o, ok := parseOwner(id)
	if !ok {
		return false
	}
	me := self()
	if o.host != me.host || o.machine == "" || o.machine != me.machine || o.boot == "" || me.boot == "" {
		return false
	}
	if o.boot != me.boot {
		return true // the machine restarted since: every process of then is gone
	}
	if o.pidns == "" || o.pidns != me.pidns || o.start == "" {
		return false
	}
	start, _, _, _ := processIdentity(o.pid)
	return start != o.start // "" when no such process
}

// shortID is a short, stable digest of an owner id, for names.
func shortID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}

// PresenceName is the name of the presence marker volume of owner id in
// project.
func PresenceName(project, id string) string {
	return "skillgate." + project + ".presence." + shortID(id)
}
