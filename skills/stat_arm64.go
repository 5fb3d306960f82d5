//go:build linux && arm64

package skills

import "syscall"

const sysFstatat = syscall.SYS_FSTATAT
