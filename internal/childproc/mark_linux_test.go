package childproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A daemon started the classic way (fork, setsid, fork again, the middle
// exits) left the child's process group and session and was re-parented
// before anything could see it below the child; the Group still reaches
// it, whether the child is stopped while it runs or has exited already.
func TestGroupReachesDaemon(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(t *testing.T, g *Group, stdin *os.File, done <-chan error)
	}{
		{"SIGTERM while the child runs", func(t *testing.T, g *Group, _ *os.File, done <-chan error) {
			if err := g.Signal(syscall.SIGTERM); err != nil {
				t.Errorf("signal: %v", err)
			}
			<-done
		}},
		{"Kill after the child exited", func(t *testing.T, g *Group, stdin *os.File, done <-chan error) {
			stdin.Close()
			if err := <-done; err != nil {
				t.Errorf("the child failed: %v", err)
			}
			if err := g.Kill(); err != nil && err != syscall.ESRCH {
				t.Errorf("kill: %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envMode+"=doublefork", "GORACE=atexit_sleep_ms=0")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stdinR, stdin, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = stdinR
			done := make(chan error, 1)
			g, err := Start(cmd, func() { done <- cmd.Wait() })
			stdinR.Close()
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			line, err := bufio.NewReader(out).ReadString('\n')
			daemon, _ := strconv.Atoi(line[:max(len(line)-1, 0)])
			if err != nil || !alive(daemon) {
				_ = g.Kill()
				<-done
				t.Fatalf("no daemon: %q, %v", line, err)
			}
			t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
			if p, _ := process(daemon); p.SID != daemon || p.PPID == cmd.Process.Pid {
				t.Fatalf("the daemon %+v did not leave the child's session, or is still its child", p)
			}

			tc.stop(t, g, stdin, done)
			waitGone(t, daemon, 5*time.Second, fmt.Sprintf("the daemon %d still runs after its starter's group was stopped", daemon))
		})
	}
}

// Start adds a new mark to the child's environment, after what the
// caller set and the marks this process carries; a nil Env stands for
// this process's environment, as it does for os/exec.
func TestStartMarks(t *testing.T) {
	const inherited = TreeEnvPrefix + "0011223344556677=1"
	t.Setenv(TreeEnvPrefix+"0011223344556677", "1")
	t.Setenv("CHILDPROC_TEST_INHERITED", "yes")
	for _, env := range [][]string{nil, {"A=b"}} {
		cmd := exec.Command("true")
		cmd.Env = env
		done := make(chan error, 1)
		g, err := Start(cmd, func() { done <- cmd.Wait() })
		if err != nil {
			t.Fatal(err)
		}
		<-done
		_ = g.Close()
		var marks []string
		for _, kv := range cmd.Env {
			if strings.HasPrefix(kv, TreeEnvPrefix) {
				marks = append(marks, kv)
			}
		}
		if len(marks) != 2 || marks[0] != inherited || marks[1] != g.mark.prefix+"1" || len(g.mark.prefix) != len(TreeEnvPrefix)+17 {
			t.Errorf("Env %q: the child got the marks %q; want %s and a new one (%q)", env, marks, inherited, g.mark.prefix)
		}
		if want := env == nil; slices.Contains(cmd.Env, "CHILDPROC_TEST_INHERITED=yes") != want || env != nil && cmd.Env[0] != "A=b" {
			t.Errorf("Env %q became %q", env, cmd.Env)
		}
	}
}

// What a Group's Kill adds when nothing carries its mark: one pass over
// /proc, reading the environment of the processes started since the
// child ("young") or of every process of this user ("all", when the
// child's start time could not be read).
func BenchmarkMarkKill(b *testing.B) {
	self, _ := process(os.Getpid())
	for _, bc := range []struct {
		name  string
		start uint64
	}{{"young", self.Start}, {"all", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			m := &mark{prefix: TreeEnvPrefix + "ffffffffffffffff=", uids: []uint32{uint32(os.Geteuid())}, start: bc.start}
			for b.Loop() {
				m.kill()
			}
		})
	}
}

// A child started with StartMarked carries a mark of its own, and its
// Mark's Kill reaches the daemon it left behind after the child was
// reaped.
func TestStartMarkedKillsDaemon(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envMode+"=doublefork", "GORACE=atexit_sleep_ms=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	m, err := StartMarked(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if m.m == nil || !slices.Contains(cmd.Env, m.m.prefix+"1") {
		t.Fatalf("the child's environment %q lacks its mark", cmd.Env)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	daemon, _ := strconv.Atoi(strings.TrimSpace(line))
	stdin.Close()
	if werr := cmd.Wait(); err != nil || werr != nil || !alive(daemon) {
		t.Fatalf("no daemon: %q, %v, %v", line, err, werr)
	}
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })

	m.Kill()
	waitGone(t, daemon, 5*time.Second, fmt.Sprintf("the daemon %d still runs after its starter's Mark was killed", daemon))
	var none *Mark
	none.Kill() // does nothing
}
