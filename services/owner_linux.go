package services

import (
	"os"
	"strconv"
	"strings"
)

// processIdentity returns what tells process pid apart from any other on
// this machine: its start time (clock ticks after boot), the boot's ID, the
// machine's ID and its PID namespace. start is "" when there is no such
// process.
func processIdentity(pid int) (start, boot, machine, pidns string) {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// The command name (field 2) may hold spaces and parentheses:
		// the fields after the last ')' are plain. starttime is field 22.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 19 {
				start = f[19]
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		boot = strings.TrimSpace(string(b))
	}
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			machine = strings.TrimSpace(string(b))
			break
		}
	}
	if len(machine) > 12 {
		machine = machine[:12]
	}
	if l, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		pidns = strings.Trim(strings.TrimPrefix(l, "pid:"), "[]")
	}
	clean := func(s string) string { return unsafeRe().ReplaceAllString(s, "_") }
	return clean(start), clean(boot), clean(machine), clean(pidns)
}
