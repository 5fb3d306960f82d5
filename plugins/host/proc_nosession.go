//go:build unix && !linux

package host

// killSession is only implemented on Linux (it needs /proc); elsewhere only
// the plugin's process group is killed.
func killSession(int) {}
