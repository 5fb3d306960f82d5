//go:build linux && amd64

package skills

import "syscall"

const sysFstatat = syscall.SYS_NEWFSTATAT
