package keylock

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSameKeyTakesTurnsOthersDoNot(t *testing.T) {
	var l Locks
	var inside atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := l.Lock("a")
			if n := inside.Add(1); n != 1 {
				t.Errorf("%d holders of key a at once", n)
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			unlock()
		}()
	}
	// Another key is not held up by a held one.
	unlockA := l.Lock("a")
	done := make(chan struct{})
	go func() { l.Lock("b")(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("key b waited for key a")
	}
	unlockA()
	wg.Wait()
	if n := len(l.m); n != 0 {
		t.Errorf("%d keys kept after every unlock, want 0", n)
	}
}
