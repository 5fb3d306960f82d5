package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mark3labs/mcp-go/server"
)

func TestEventStoreBounds(t *testing.T) {
	ctx := context.Background()
	s := newEventStore(3, 2)
	var ids []string
	for i := range 5 {
		id, err := s.StoreEvent(ctx, "sess", "a", json.RawMessage(`{"n":`+string(rune('0'+i))+`}`))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Only the last 3 events of stream a are kept: resuming after event 3
	// replays 4 and 5; event 1 is forgotten.
	var got []string
	sid, err := s.ReplayEventsAfter(ctx, "sess", ids[2], func(id string, msg json.RawMessage) error {
		got = append(got, string(msg))
		return nil
	})
	if err != nil || sid != "a" || len(got) != 2 || got[0] != `{"n":3}` || got[1] != `{"n":4}` {
		t.Fatalf("replay = %v %q %v", got, sid, err)
	}
	if _, err := s.ReplayEventsAfter(ctx, "sess", ids[0], func(string, json.RawMessage) error { return nil }); !errors.Is(err, server.ErrUnknownEventID) {
		t.Fatalf("evicted event: err = %v", err)
	}
	// Another session cannot resume this session's stream.
	if _, err := s.ReplayEventsAfter(ctx, "other", ids[4], func(string, json.RawMessage) error { return nil }); !errors.Is(err, server.ErrUnknownEventID) {
		t.Fatalf("foreign session: err = %v", err)
	}
	// A third stream evicts the oldest one.
	_, _ = s.StoreEvent(ctx, "sess", "b", json.RawMessage(`{}`))
	_, _ = s.StoreEvent(ctx, "sess", "c", json.RawMessage(`{}`))
	if len(s.streams) != 2 || s.streams["sess\x00a"] != nil || len(s.ids) != 2 {
		t.Fatalf("streams = %d, ids = %d; want 2 and 2 with a evicted", len(s.streams), len(s.ids))
	}
	if err := s.PurgeSession(ctx, "sess"); err != nil || len(s.streams) != 0 || len(s.ids) != 0 {
		t.Fatalf("purge: %v, %d streams, %d ids", err, len(s.streams), len(s.ids))
	}
}
