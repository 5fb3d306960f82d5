package childproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// envMode makes the test binary a helper process instead of running tests.
const envMode = "CHILDPROC_TEST_MODE"

func TestMain(m *testing.M) {
	switch os.Getenv(envMode) {
	case "parent":
		// Start a child in a session of its own, print its pid, and exit
		// when stdin closes, orphaning it.
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envMode+"=sleep")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		_, _ = os.Stdin.Read(make([]byte, 1))
		os.Exit(0)
	case "sleep":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "doublefork":
		// A daemon the classic way: a middle process starts it in a session
		// of its own and exits, so that it is re-parented before anyone
		// looks. Print its pid, and exit when stdin closes.
		middle := exec.Command(os.Args[0], "-test.run=^$")
		middle.Env = append(os.Environ(), envMode+"=middle")
		middle.Stdout = os.Stdout
		if err := middle.Run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_, _ = os.Stdin.Read(make([]byte, 1))
		os.Exit(0)
	case "middle":
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envMode+"=sleep")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A descendant seen while its parent ran is killed after the parent died
// and it was re-parented, though it left the parent's session.
func TestTreeOutlivesParent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envMode+"=parent", "GORACE=atexit_sleep_ms=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tree := NewTree(cmd.Process.Pid)
	line, err := bufio.NewReader(out).ReadString('\n')
	child, _ := strconv.Atoi(line[:max(len(line)-1, 0)])
	if err != nil || !alive(child) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("no child: %q, %v", line, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })

	tree.Scan()
	stdin.Close()
	_ = cmd.Wait() // the parent is gone; its child was re-parented
	if !alive(child) {
		t.Fatal("the child died with its parent")
	}
	tree.Kill()
	waitGone(t, child, 2*time.Second, fmt.Sprintf("child %d still runs after Kill", child))
}

// The record follows parent links from the root and from the descendants
// seen before, and forgets a pid that another process took over.
func TestTreeScan(t *testing.T) {
	tree := &Tree{root: 10, rootStart: 100, seen: map[int]uint64{}}
	live := tree.scan([]Proc{
		{PID: 10, PPID: 1, State: 'S', Start: 100},
		{PID: 11, PPID: 10, State: 'S', Start: 101}, // a child
		{PID: 12, PPID: 11, State: 'Z', Start: 102}, // an exited grandchild
		{PID: 13, PPID: 12, State: 'S', Start: 103}, // its child, not yet re-parented
		{PID: 20, PPID: 1, State: 'S', Start: 50},   // a stranger
	})
	if want := []int{11, 13}; !slices.Equal(live, want) {
		t.Fatalf("live = %v, want %v", live, want)
	}
	// The root died, 11 was re-parented, 13's pid went to a stranger.
	live = tree.scan([]Proc{
		{PID: 10, PPID: 1, State: 'S', Start: 900}, // the root's pid, another process
		{PID: 14, PPID: 10, State: 'S', Start: 901},
		{PID: 11, PPID: 1, State: 'S', Start: 101},
		{PID: 15, PPID: 11, State: 'S', Start: 902}, // forked since
		{PID: 13, PPID: 1, State: 'S', Start: 903},
	})
	if want := []int{11, 15}; !slices.Equal(live, want) {
		t.Fatalf("live = %v, want %v", live, want)
	}
}
