package sdk

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A process of another user is refused even with the right token.
func TestSideChannelOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	served := make(chan *frameConn, 1)
	o, err := offerSide(func(fc *frameConn) { served <- fc })
	if err != nil || o == nil {
		t.Fatalf("offer: %v", err)
	}
	defer o.close()
	// The test binary's own folder is closed to other users: run a copy.
	dir, err := os.MkdirTemp("", "sdk-side-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "client")
	self, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(bin, self, 0o755)
	}
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	dial := func(uid uint32) (string, error) {
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = append(os.Environ(), "SDK_TEST_SIDE_DIAL="+o.address, "SDK_TEST_SIDE_TOKEN="+hex.EncodeToString(o.token))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := dial(65534); err == nil {
		t.Fatalf("user 65534 opened the channel: %s", out)
	} else if !strings.Contains(out, "refused") {
		t.Fatalf("user 65534: %v: %s", err, out)
	}
	if out, err := dial(0); err != nil {
		t.Fatalf("our own user was refused: %v: %s", err, out)
	}
	(<-served).Close()
}
