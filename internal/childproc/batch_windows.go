package childproc

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"
)

// WrapBatch makes cmd, when its Path is a batch script, run it under the
// system's cmd.exe with the command line of BatchCommandLine, instead of
// leaving CreateProcess to start cmd.exe with a quoting cmd.exe misreads
// (an argument holding & would run a command). cmd.Args[1:] are the
// script's arguments. It returns an error wrapping ErrBatchArg for an
// argument that cannot be passed safely; other programs are left alone.
func WrapBatch(cmd *exec.Cmd) error {
	if !IsBatch(cmd.Path) {
		return nil
	}
	sys, err := windows.GetSystemDirectory()
	if err != nil {
		return fmt.Errorf("run batch script %s: find cmd.exe: %w", cmd.Path, err)
	}
	cmdExe := filepath.Join(sys, "cmd.exe")
	var args []string
	if len(cmd.Args) > 1 {
		args = cmd.Args[1:]
	}
	line, err := BatchCommandLine(cmdExe, cmd.Path, args)
	if err != nil {
		return err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.Path, cmd.Args = cmdExe, []string{cmdExe}
	cmd.SysProcAttr.CmdLine = line
	return nil
}
