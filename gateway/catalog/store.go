package catalog

import (
	"sync"
	"sync/atomic"
)

// empty is what a Store serves before its first publication.
var empty = Build(nil, Options{})

// Store holds the current Snapshot and the sources it was built from.
//
// Load is the readers' side: one atomic load, no lock, safe from any number
// of goroutines at any time. The writers — SetSource, RemoveSource, Reload
// and Swap — serialize on a mutex; each publishes a new Snapshot with the
// next Version and tells subscribers. The zero Store is ready to use with
// default Options.
type Store struct {
	cur atomic.Pointer[Snapshot]

	mu      sync.Mutex // serializes writers; guards the fields below
	opts    Options
	sources map[string]Source
	version uint64
	subs    map[chan *Snapshot]struct{}
}

// NewStore returns a Store that builds with opts and serves an empty
// Snapshot until the first publication.
func NewStore(opts Options) *Store {
	return &Store{opts: opts}
}

// Load returns the current Snapshot; it is never nil.
func (s *Store) Load() *Snapshot {
	if p := s.cur.Load(); p != nil {
		return p
	}
	return empty
}

// SetSource adds src, or replaces the source with its ID, rebuilds and
// publishes. The Store keeps src: do not modify its Defs afterwards.
func (s *Store) SetSource(src Source) *Snapshot { return s.SetSources(src) }

// SetSources is SetSource for several sources with one rebuild.
func (s *Store) SetSources(srcs ...Source) *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sources == nil {
		s.sources = make(map[string]Source)
	}
	for _, src := range srcs {
		s.sources[src.ID] = src
	}
	return s.rebuild()
}

// RemoveSource removes the sources with ids (those it has), rebuilds once
// and publishes.
func (s *Store) RemoveSource(ids ...string) *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.sources, id)
	}
	return s.rebuild()
}

// Reload replaces the options and the whole source set (a configuration
// reload), rebuilds and publishes. Sources with a repeated ID keep the last.
func (s *Store) Reload(opts Options, sources []Source) *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts = opts
	s.sources = make(map[string]Source, len(sources))
	for _, src := range sources {
		s.sources[src.ID] = src
	}
	return s.rebuild()
}

// Swap publishes snap, built elsewhere, and returns the published Snapshot:
// a shallow copy of snap carrying the Store's next Version (snap itself is
// not modified, as others may be reading it). A later SetSource,
// RemoveSource or Reload rebuilds from the Store's own sources and
// replaces it.
func (s *Store) Swap(snap *Snapshot) *Snapshot {
	cp := *snap
	s.mu.Lock()
	defer s.mu.Unlock()
	s.publish(&cp)
	return &cp
}

// Subscribe returns a channel that receives each Snapshot the Store
// publishes from now on, and a cancel func that stops delivery and closes
// the channel. A slow subscriber misses intermediate snapshots, never the
// latest: the channel holds one Snapshot and a newer one replaces it.
// Nothing is sent at subscription; call Load after Subscribe for the
// current Snapshot. Cancel may be called more than once.
func (s *Store) Subscribe() (<-chan *Snapshot, func()) {
	ch := make(chan *Snapshot, 1)
	s.mu.Lock()
	if s.subs == nil {
		s.subs = make(map[chan *Snapshot]struct{})
	}
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.subs[ch]; ok {
			delete(s.subs, ch)
			close(ch)
		}
	}
}

// rebuild builds from the current sources and publishes. s.mu is held.
func (s *Store) rebuild() *Snapshot {
	srcs := make([]Source, 0, len(s.sources))
	for _, src := range s.sources {
		srcs = append(srcs, src)
	}
	snap := Build(srcs, s.opts)
	s.publish(snap)
	return snap
}

// publish stamps snap, which no one else sees yet, with the next version,
// makes it current and hands it to subscribers. s.mu is held, so this is
// the only sender: after draining a full buffer the send cannot block.
func (s *Store) publish(snap *Snapshot) {
	s.version++
	snap.version = s.version
	s.cur.Store(snap)
	for ch := range s.subs {
		select {
		case ch <- snap:
		default:
			select {
			case <-ch:
			default:
			}
			ch <- snap
		}
	}
}
