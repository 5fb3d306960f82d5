package host

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Windows has no process groups to kill; the plugin process alone is killed.
// Executors that start processes of their own must end them themselves.

func setGroup(*exec.Cmd) {}

func killGroup(pid int) {
	if pid > 0 {
		_ = exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
	}
}

func executable(name string, _ fs.FileMode) bool {
	return strings.EqualFold(filepath.Ext(name), ".exe")
}
