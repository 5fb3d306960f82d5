package services

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Starts take turns. Two skillgate processes of a project (gateway
// replicas that start together) that both found a built service missing
// used to build it twice, making two images, and the second took the
// first's fresh container for a stale one (not its own image) and removed
// it while the first waited for it. So building, creating, removing and
// restarting a service's container happen under a lock per project and
// service that every process of this machine sees: a flock on a file in
// Options.LockDir. The process that comes second finds the image and the
// container the first made, and adopts them. The routine check of a
// running container takes no lock (adoptRunning): it never waits for a
// long build elsewhere.

// defaultLockDir is the folder of lock files when Options.LockDir is empty:
// under the gateway's state folder, which every process of one user shares
// (the temp folder is not: TMPDIR may differ between them).
func defaultLockDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "skillgate", "locks")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "skillgate", "locks")
	}
	return filepath.Join(os.TempDir(), "skillgate-locks")
}

// lockService waits until it holds the lock of service name and returns
// the function that releases it; it fails only when ctx ends first. A lock
// that cannot be taken at all (a folder that cannot be written, a platform
// without flock) is skipped, with a warning: the start goes on alone, as
// it would have before locks.
func (m *Manager) lockService(ctx context.Context, name string) (func(), error) {
	none := func() {}
	if !haveFlock {
		return none, nil
	}
	dir := m.opts.LockDir
	path := filepath.Join(dir, m.opts.Project+"."+name+".lock")
	skip := func(err error) (func(), error) {
		m.lockWarn.Do(func() {
			m.log.Warn("cannot take the lock that makes skillgate processes on this machine take turns to start a service; starting without it (replicas that start together may then recreate each other's container); make the folder writable or set its place",
				"lock", path, "err", err)
		})
		return none, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return skip(err)
	}
	delay := 10 * time.Millisecond
	for waited := false; ; waited = true {
		f, err := tryLockFile(path)
		if err != nil {
			return skip(err)
		}
		if f != nil {
			return func() {
				// Removed while held, so that none is left behind: a waiter
				// that then locks the removed file sees it and tries again.
				_ = os.Remove(path)
				f.Close()
			}, nil
		}
		if !waited {
			m.log.Info("another skillgate process is starting this service; waiting for it, to adopt what it makes", "service", name, "lock", path)
			if m.lockWait != nil {
				m.lockWait(name)
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("service %s: waiting for another process's start of it: %w", name, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 250*time.Millisecond)
	}
}
