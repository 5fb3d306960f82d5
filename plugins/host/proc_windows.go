package host

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// Windows has no process groups to kill: killGroup ends the plugin's
// process tree by parent links (taskkill /T). The built-in executors put
// what they start in job objects (see childproc.Group), which end with them.

// setGroup starts the plugin without a console window of its own, which
// would flash up for every plugin of a gateway that has no console (as
// under Claude Desktop); its stdio are pipes anyway.
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NO_WINDOW
}

func killGroup(pid int) {
	if pid > 0 {
		_ = exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
	}
}

func executable(name string, _ fs.FileMode) bool {
	return strings.EqualFold(filepath.Ext(name), ".exe")
}
