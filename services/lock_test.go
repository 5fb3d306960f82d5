//go:build unix

package services

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLockServiceTakesTurns: a second holder of a service's lock waits
// (and says so) until the first lets go; the lock file is gone once
// nobody holds it; a wait ends with its context.
func TestLockServiceTakesTurns(t *testing.T) {
	dir := t.TempDir()
	newM := func() *Manager {
		m, err := New([]Spec{kvSpec("kv")}, Options{Project: "unit", Engine: newFake(), LockDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(context.Background()) })
		return m
	}
	first, second := newM(), newM()
	path := filepath.Join(dir, "unit.kv.lock")
	unlock, err := first.lockService(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the held lock has no file: %v", err)
	}

	waiting := make(chan struct{})
	second.lockWait = func(string) { close(waiting) }
	got := make(chan error, 1)
	var unlock2 func()
	go func() {
		var err error
		unlock2, err = second.lockService(t.Context(), "kv")
		got <- err
	}()
	select {
	case <-waiting:
	case err := <-got:
		t.Fatalf("the second took the lock the first holds (err %v)", err)
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the lock the second holds has no file: %v", err)
	}

	// A third waits in vain while the second holds it, until its context ends.
	ctx, cancel := context.WithCancel(t.Context())
	third := newM()
	third.lockWait = func(string) { cancel() }
	if _, err := third.lockService(ctx, "kv"); !errors.Is(err, context.Canceled) {
		t.Errorf("a wait whose context ended returned %v", err)
	}
	unlock2()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left after the last holder let go: %v", err)
	}
}
