//go:build !windows

package childproc

var envKeys = unixEnvKeys

// foldEnv: variable names are case-sensitive.
const foldEnv = false
