package script

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// A tool without the sandbox that leaves a daemon behind (setsid: a
// session and process group of its own) and then hangs is killed at its
// timeout together with the daemon.
func TestTimeoutKillsSetsidChild(t *testing.T) {
	h := newHarness(t)
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	script := `setsid sh -c 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 300' sh ` + pidFile + ` </dev/null >/dev/null 2>&1 &
while [ ! -s ` + pidFile + ` ]; do sleep 0.01; done
while :; do echo tick; sleep 0.1; done
`
	dir := folder(t, "name: d\ndescription: d\nruntime: bash\nentry: d.sh\ntimeout: 1s\n", map[string]string{"d.sh": script})
	h.mustLoad("d", dir, toolspec.Limits{})
	r := h.call("d", "d", nil, nil)
	data, err := os.ReadFile(pidFile)
	daemon, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || daemon <= 0 {
		t.Fatalf("no daemon pid (%v); result: %s", err, r.raw)
	}
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
	if !r.IsError || r.status() != "timeout" {
		t.Fatalf("result: %s", r.raw)
	}
	deadline := time.Now().Add(5 * time.Second)
	for testenv.Alive(daemon) {
		if time.Now().After(deadline) {
			t.Fatalf("the tool's daemon %d still runs after the tool was killed at its timeout", daemon)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
