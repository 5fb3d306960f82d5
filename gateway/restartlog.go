package gateway

import (
	"context"
	"log/slog"
)

// An executor logs its sources' state changes ("upstream ready") with the
// restart count it knows: its own process's. The gateway counts more — the
// restarts under earlier processes of a plugin the host restarted, and its
// own retries of a failed load — and /readyz shows that count. So the
// executors' log goes through restartsLog, which gives a record naming one
// of the gateway's sources (a "source" attribute) the count /readyz shows
// for the same event.
//
// The record and the status change it goes with reach the gateway on
// different paths (the plugin's stderr, its watch stream), in either
// order. Within one executor process the count only grows, and only in a
// state change that is logged; a new process starts again from 0, after
// the host reported the source starting with the count it goes on from.
// So the count of a record is the larger of the one the gateway holds and
// the one of the last record plus what the executor's own count grew by
// since (see source.loggedRestarts).

// restartsLog is the slog.Handler of the executors' log.
type restartsLog struct {
	next  slog.Handler
	g     *Gateway
	attrs []slog.Attr // given by WithAttrs ("executor", "source")
	group bool        // attributes go into a group: left alone
}

var _ slog.Handler = (*restartsLog)(nil)

func (h *restartsLog) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *restartsLog) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(as)
	if !h.group {
		c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	}
	return &c
}

func (h *restartsLog) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	c.group = c.group || name != ""
	return &c
}

func (h *restartsLog) Handle(ctx context.Context, r slog.Record) error {
	if h.group {
		return h.next.Handle(ctx, r)
	}
	var exec, src string
	restarts, has := int64(0), false
	look := func(a slog.Attr) bool {
		switch a.Key {
		case "executor":
			exec = a.Value.String()
		case "source":
			src = a.Value.String()
		case "restarts":
			switch v := a.Value.Resolve(); v.Kind() {
			case slog.KindInt64:
				restarts, has = v.Int64(), true
			case slog.KindFloat64: // a plugin's JSON line
				restarts, has = int64(v.Float64()), true
			}
		}
		return true
	}
	for _, a := range h.attrs {
		look(a)
	}
	r.Attrs(look)
	if !has || src == "" {
		return h.next.Handle(ctx, r)
	}
	s := h.g.routes.Load().sources[src]
	if s == nil || exec != "" && exec != s.execName {
		return h.next.Handle(ctx, r)
	}
	n := s.loggedRestarts(int(restarts))
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "restarts" {
			a = slog.Int("restarts", n)
		}
		out.AddAttrs(a)
		return true
	})
	return h.next.Handle(ctx, out)
}

// loggedRestarts is the restart count to log for a state change the
// executor reports with its own count own (see restartsLog).
func (s *source) loggedRestarts(own int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.execRestarts
	if own >= s.loggedOwn {
		n = max(n, s.logged+own-s.loggedOwn)
	}
	s.loggedOwn, s.logged = own, n
	return s.retries + n
}
