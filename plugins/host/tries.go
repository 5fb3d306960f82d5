package host

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// maxStartTries is how many launches in a row a version of a plugin file
// gets, as long as none of them completed the handshake and Info, before
// the host gives up on it (ErrGaveUp). A file that did start once (a crash
// after that, a failed start now and then) is restarted for as long as it
// takes. Failures that cannot go away by trying again (another protocol,
// a program that is not a plugin, an invalid Info) give up at once.
const maxStartTries = 3

// fileCheckInterval is how often a plugin given up on looks for a new
// version of its file.
const fileCheckInterval = time.Second

// fileVersion tells versions of a plugin file apart.
type fileVersion struct {
	size  int64
	mtime int64 // UnixNano
}

// versionOf returns the version of the file at path; ok is false when it
// cannot be read, and the launch fails before running anything.
func versionOf(path string) (v fileVersion, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileVersion{}, false
	}
	return fileVersion{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}

// tries remembers how the launches of one plugin went, for the version of
// its file they ran, to tell a plugin that crashed from one that can never
// start. A Manager keeps one per plugin name across Starts; a Plugin shares
// it with its supervisor's restarts.
type tries struct {
	mu       sync.Mutex
	path     string
	version  fileVersion
	started  bool  // a launch of this version completed the handshake and Info
	failures int   // launches in a row that failed
	gaveUp   error // why the host gave up on this version; nil while it tries
}

// check is called before a launch of the file at path: it returns the
// error to fail with, without running anything, when the host gave up on
// the file as it is now, and the version the launch is about.
func (t *tries) check(path string) (fileVersion, error) {
	v, _ := versionOf(path)
	t.mu.Lock()
	defer t.mu.Unlock()
	if path != t.path || v != t.version {
		t.path, t.version = path, v
		t.started, t.failures, t.gaveUp = false, 0, nil
	}
	return v, t.gaveUp
}

// succeeded records a launch of version v that completed.
func (t *tries) succeeded(v fileVersion) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v != t.version {
		return
	}
	t.started, t.failures, t.gaveUp = true, 0, nil
}

// failed records a failed launch of version v, which ran the file; final
// says that trying again cannot help. It returns the error to report,
// which wraps ErrGaveUp when the host gives up now (first) or had given up.
func (t *tries) failed(v fileVersion, err error, final bool) (_ error, first bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v != t.version || t.started {
		return err, false // a file that started once: a crash, try again
	}
	if t.gaveUp != nil {
		return t.gaveUp, false
	}
	t.failures++
	switch {
	case final:
		t.gaveUp = fmt.Errorf("%w; %w", err, ErrGaveUp)
	case t.failures >= maxStartTries:
		t.gaveUp = fmt.Errorf("%w (%d failed starts in a row, none of which completed the handshake and Info); %w",
			err, t.failures, ErrGaveUp)
	default:
		return err, false
	}
	return t.gaveUp, true
}

// reset forgets that the host gave up, so that the next launch runs the
// file again.
func (t *tries) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures, t.gaveUp = 0, nil
}

// retryable reports whether a launch would run the file again: it changed,
// or reset was called.
func (t *tries) retryable() bool {
	t.mu.Lock()
	path, version, gaveUp := t.path, t.version, t.gaveUp
	t.mu.Unlock()
	v, _ := versionOf(path)
	return gaveUp == nil || v != version
}
