package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
)

// sseEvent is what an SSE reader dispatches: the data of an event, and the
// last event id seen when it (or an id-only event) ended.
type sseEvent struct{ id, data string }

// parseSSE reads a stream as an SSE reader does (the parts mcp-go uses):
// events with data, and id-only events, which only move the last id.
func parseSSE(b []byte) (events []sseEvent, lastID string) {
	var data []string
	id, hasData := "", false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasSuffix(line, "\n") {
			break // an unfinished line is not dispatched
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if hasData {
				events = append(events, sseEvent{id, strings.Join(data, "\n")})
			}
			lastID, data, hasData = id, nil, false
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			hasData = true
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimPrefix(strings.TrimPrefix(line, "id:"), " ")
		}
	}
	return events, lastID
}

type note struct{ method, params string }

// filterSSE runs in through sseNotes with a reader buffer of size bytes,
// reading size bytes at a time.
func filterSSE(t testing.TB, in []byte, size int) (out []byte, notes []note) {
	s := &sseNotes{body: io.NopCloser(bytes.NewReader(in)), ctx: context.Background(),
		note: func(_ context.Context, method string, params json.RawMessage) {
			notes = append(notes, note{method, string(params)})
		}}
	s.br = bufio.NewReaderSize(s.body, size)
	buf := make([]byte, size)
	for {
		n, err := s.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, notes
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
	}
}

func TestSSENotes(t *testing.T) {
	big := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", holdMax) + `"}}`
	for _, tc := range []struct {
		name, in, out string
		notes         []note
	}{{
		name:  "a log message, then the result",
		in:    "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		out:   "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		notes: []note{{"notifications/message", `{"level":"info","data":"hi"}`}},
	}, {
		name:  "the id of a notification stays behind, for resuming",
		in:    "id: 7\r\nretry: 500\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"sg-1\",\"progress\":1}}\r\n\r\n",
		out:   "id: 7\r\nretry: 500\r\n\r\n",
		notes: []note{{"notifications/progress", `{"progressToken":"sg-1","progress":1}`}},
	}, {
		name:  "data split over lines, a null id, no params",
		in:    "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":null,\"method\":\"notifications/x\"}\n\n",
		notes: []note{{"notifications/x", ``}},
	}, {
		name: "server requests, responses and what is not JSON go through",
		in:   "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\",\"params\":{}}\n\n: a comment\n\ndata: not json {\"method\":\"x\"}\n\ndata: {\"method\":\"x\",\n\n",
		out:  "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\",\"params\":{}}\n\n: a comment\n\ndata: not json {\"method\":\"x\"}\n\ndata: {\"method\":\"x\",\n\n",
	}, {
		name: "an unfinished event at the end goes through as it is",
		in:   "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n",
		out:  "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n",
	}, {
		name:  "an event over holdMax goes through unread",
		in:    "data: " + big + "\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n",
		out:   "data: " + big + "\n\n",
		notes: []note{{"notifications/message", `{}`}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{16, 4096} {
				out, notes := filterSSE(t, []byte(tc.in), size)
				if string(out) != tc.out || !slices.Equal(notes, tc.notes) {
					t.Fatalf("buffer %d: out %.200q, notes %.200q; want %.200q, %.200q", size, out, notes, tc.out, tc.notes)
				}
			}
		})
	}
}

// FuzzSSENotes checks that filtering a stream loses nothing: an SSE reader
// sees every event of the stream that is not a notification, in order,
// with its id, and the same last id; the notifications reach note, in
// order. Events under holdMax only, which the fuzzer's inputs are.
func FuzzSSENotes(f *testing.F) {
	f.Add([]byte("id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"a\"}}\n\ndata: {\"id\":1,\"result\":{}}\n\n"), 16)
	f.Add([]byte("data: {\"method\":\"m\"}\r\n\r\ndata: x\n\nid: 2\n\n"), 100)
	f.Fuzz(func(t *testing.T, in []byte, size int) {
		size = 16 + (size&0xffff)%4096
		out, notes := filterSSE(t, in, size)
		wantEvents, wantID := parseSSE(in)
		var keep []sseEvent
		var wantNotes []note
		for _, e := range wantEvents {
			if method, params, ok := notification([]byte(e.data)); ok {
				wantNotes = append(wantNotes, note{method, string(params)})
			} else {
				keep = append(keep, e)
			}
		}
		gotEvents, gotID := parseSSE(out)
		if !slices.Equal(gotEvents, keep) || gotID != wantID || !slices.Equal(notes, wantNotes) {
			t.Fatalf("in %q\nout %q\nevents %q, want %q\nlast id %q, want %q\nnotes %q, want %q", in, out, gotEvents, keep, gotID, wantID, notes, wantNotes)
		}
	})
}
