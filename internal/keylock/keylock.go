// Package keylock serializes work per key (a source name): callers with the
// same key take turns, callers with different keys do not wait for each
// other. An executor uses it so that Load and Unload of one source never
// overlap.
package keylock

import "sync"

// Locks is a set of mutexes by key. Its zero value is ready to use; a key's
// mutex is dropped when nobody holds or waits for it.
type Locks struct {
	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	sync.Mutex
	users int // holders and waiters
}

// Lock locks key and returns the function that unlocks it.
func (l *Locks) Lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*entry{}
	}
	e := l.m[key]
	if e == nil {
		e = &entry{}
		l.m[key] = e
	}
	e.users++
	l.mu.Unlock()
	e.Lock()
	return func() {
		e.Unlock()
		l.mu.Lock()
		if e.users--; e.users == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
}
