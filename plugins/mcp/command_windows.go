package mcp

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/windows"

	"github.com/skillgate/skillgate/internal/childproc"
)

// resolveCommand finds the program to run with the PATH and PATHEXT of env
// (see lookPathExt): "npx" is npx.cmd, "uvx" uvx.exe.
func resolveCommand(command, cwd string, env []string) (string, error) {
	return lookPathExt(command, cwd, filepath.SplitList(envValue(env, "PATH")), envValue(env, "PATHEXT"))
}

// prepare makes cmd run a batch script under cmd.exe with an argument
// quoting cmd.exe cannot misread (see childproc.WrapBatch), and refuses a
// file Windows would only open through a file association.
func prepare(cmd *exec.Cmd) error {
	if err := windowsRunnable(cmd.Path); err != nil {
		return err
	}
	return childproc.WrapBatch(cmd)
}

var pipeSeq atomic.Uint64

// stdinPipe is the pipe of a server's stdin: the read end for the child,
// the write end ours. os.Pipe's ends take no deadlines on Windows
// (SetWriteDeadline fails with os.ErrNoDeadline), and the wire needs one
// to notice a server that stopped reading. So this is a named pipe, the
// way Rust's standard library makes its anonymous pipes: our end opened
// for overlapped I/O, which os.NewFile hands to the runtime poller; the
// child's end an ordinary synchronous handle, as programs expect of stdin.
// The name is random, the pipe has one instance and refuses remote
// clients, and it is connected at once, so no other process can take it.
func stdinPipe() (r, w *os.File, err error) {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	name := fmt.Sprintf(`\\.\pipe\skillgate-stdin-%d-%d-%x`, os.Getpid(), pipeSeq.Add(1), binary.LittleEndian.Uint64(nonce[:]))
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, nil, err
	}
	ours, err := windows.CreateNamedPipe(name16,
		windows.PIPE_ACCESS_OUTBOUND|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, 64<<10, 64<<10, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create pipe %s: %w", name, err)
	}
	theirs, err := windows.CreateFile(name16, windows.GENERIC_READ, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		_ = windows.CloseHandle(ours)
		return nil, nil, fmt.Errorf("open pipe %s: %w", name, err)
	}
	return os.NewFile(uintptr(theirs), "|0"), os.NewFile(uintptr(ours), "|1"), nil
}
