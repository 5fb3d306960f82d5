package frontend

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// eventStore keeps the most recent SSE events of each stream so a client
// can resume after a dropped connection (Last-Event-ID), within fixed
// memory: each stream keeps its last perStream events, and at most
// maxStreams streams are kept (the oldest is forgotten first).
//
// It also matters for correctness: with an event store, mcp-go writes a
// call's notifications and its result through one ordered path, so the
// last progress or log notification before a result is never dropped
// (without one, mcp-go can lose it: its issue #969).
type eventStore struct {
	mu      sync.Mutex
	seq     uint64
	streams map[string]*eventStream // by session + "\x00" + stream id
	order   []string                // stream keys, oldest first
	ids     map[string]string       // event id -> stream key, for live events

	perStream, maxStreams int
}

type eventStream struct {
	session, id string
	events      []storedEvent
}

type storedEvent struct {
	id  string
	msg json.RawMessage
}

var _ server.EventStore = (*eventStore)(nil)

func newEventStore(perStream, maxStreams int) *eventStore {
	return &eventStore{
		streams: map[string]*eventStream{}, ids: map[string]string{},
		perStream: perStream, maxStreams: maxStreams,
	}
}

// StoreEvent implements server.EventStore.
func (s *eventStore) StoreEvent(_ context.Context, sessionID, streamID string, message json.RawMessage) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := sessionID + "\x00" + streamID
	st := s.streams[key]
	if st == nil {
		if len(s.order) >= s.maxStreams {
			s.dropLocked(s.order[0])
		}
		st = &eventStream{session: sessionID, id: streamID}
		s.streams[key] = st
		s.order = append(s.order, key)
	}
	s.seq++
	id := strconv.FormatUint(s.seq, 10)
	if len(st.events) == s.perStream {
		delete(s.ids, st.events[0].id)
		st.events = append(st.events[:0], st.events[1:]...)
	}
	st.events = append(st.events, storedEvent{id: id, msg: append(json.RawMessage(nil), message...)})
	s.ids[id] = key
	return id, nil
}

// ReplayEventsAfter implements server.EventStore.
func (s *eventStore) ReplayEventsAfter(_ context.Context, sessionID, lastEventID string, send func(eventID string, message json.RawMessage) error) (string, error) {
	s.mu.Lock()
	key, ok := s.ids[lastEventID]
	var st *eventStream
	if ok {
		st = s.streams[key]
	}
	if st == nil || st.session != sessionID {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %s", server.ErrUnknownEventID, lastEventID)
	}
	var tail []storedEvent
	for i, ev := range st.events {
		if ev.id == lastEventID {
			tail = append(tail, st.events[i+1:]...)
			break
		}
	}
	streamID := st.id
	s.mu.Unlock()
	for _, ev := range tail {
		if err := send(ev.id, ev.msg); err != nil {
			return "", err
		}
	}
	return streamID, nil
}

// PurgeSession implements server.EventStore.
func (s *eventStore) PurgeSession(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, st := range s.streams {
		if st.session == sessionID {
			s.dropLocked(key)
		}
	}
	return nil
}

func (s *eventStore) dropLocked(key string) {
	st := s.streams[key]
	if st == nil {
		return
	}
	for _, ev := range st.events {
		delete(s.ids, ev.id)
	}
	delete(s.streams, key)
	for i, k := range s.order {
		if k == key {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}
