package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/skillgate/skillgate/internal/jsonscan"
)

// Over streamable HTTP an upstream sends the notifications of a request on
// that request's own response stream, so they belong to the call that made
// it. mcp-go's client hands them to one notification handler with no
// context, which loses that. readNotes puts it back: the wire's
// http.RoundTripper reads each response stream of a request the wire made,
// takes the notifications out of it and hands them to the wire's
// notification handler with the request's context. Everything else
// (results, server requests, event ids, retry fields) reaches mcp-go byte
// for byte, in the order it came.

// streamKey marks a request context whose response streams are read for
// notifications.
type streamKey struct{}

// holdMax bounds how much of one SSE event is held while it is read. A
// bigger event (a large result) goes through unread, as it is.
const holdMax = 1 << 20

// readNotes wraps the body of resp, a response to req, to take the
// notifications out of it when it is an event stream of a request marked
// with streamKey.
func readNotes(req *http.Request, resp *http.Response, note func(ctx context.Context, method string, params json.RawMessage)) {
	if req.Context().Value(streamKey{}) == nil {
		return
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return
	}
	resp.Body = &sseNotes{body: resp.Body, br: bufio.NewReaderSize(resp.Body, 32<<10), ctx: req.Context(), note: note}
}

// sseNotes reads an SSE stream and passes it on without its notification
// events, each of which it hands to note instead. A notification event
// that carried an id leaves the id behind as an event with no data, which
// an SSE reader records for resuming and otherwise ignores. To keep the
// order between the notifications it hands on and the messages mcp-go
// reads, a Read returns at most one event.
type sseNotes struct {
	body io.ReadCloser
	br   *bufio.Reader
	ctx  context.Context
	note func(ctx context.Context, method string, params json.RawMessage)

	ev      []byte // the lines of the event being read
	fields  []byte // its id and retry lines
	data    []byte // its data, joined as an SSE reader joins it
	hasData bool
	line    []byte // a line longer than the reader's buffer, so far
	passing bool   // the event outgrew holdMax: its lines go straight out

	out []byte // bytes ready for Read
	err error  // where the stream ended, once out is drained
}

func (s *sseNotes) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.step()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *sseNotes) Close() error { return s.body.Close() }

// step reads one line, or the part of a long one that fits the buffer.
func (s *sseNotes) step() {
	chunk, err := s.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		if s.passing {
			s.out = append(s.out, chunk...)
			return
		}
		s.line = append(s.line, chunk...)
		if len(s.ev)+len(s.line) > holdMax {
			s.pass()
		}
		return
	}
	line := chunk
	if len(s.line) > 0 {
		line = append(s.line, chunk...)
		s.line = s.line[:0]
	}
	if err != nil {
		// The stream ended (or broke) mid-event: pass the rest on as it
		// is, and let mcp-go decide what an unfinished event means.
		s.out = append(append(s.out, s.ev...), line...)
		s.reset()
		s.err = err
		return
	}
	if s.passing {
		s.out = append(s.out, line...)
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			s.passing = false
		}
		return
	}
	s.add(line)
}

// pass gives up holding the current event: what is held goes out, and so
// do its remaining lines.
func (s *sseNotes) pass() {
	s.out = append(append(s.out, s.ev...), s.line...)
	s.line = s.line[:0]
	s.reset()
	s.passing = true
}

// add takes one whole line of the event being read.
func (s *sseNotes) add(line []byte) {
	field := bytes.TrimRight(line, "\r\n")
	if len(field) == 0 {
		s.dispatch(line)
		return
	}
	s.ev = append(s.ev, line...)
	switch {
	case bytes.HasPrefix(field, []byte("data:")):
		v := field[len("data:"):]
		v = bytes.TrimPrefix(v, []byte(" "))
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, v...)
		s.hasData = true
	case bytes.HasPrefix(field, []byte("id:")), bytes.HasPrefix(field, []byte("retry:")):
		s.fields = append(s.fields, line...)
	}
	if len(s.ev) > holdMax {
		s.pass()
	}
}

// dispatch ends the event with its blank line: a notification goes to
// note, anything else out as it came.
func (s *sseNotes) dispatch(blank []byte) {
	if method, params, ok := notification(s.data); s.hasData && ok {
		s.note(s.ctx, method, params)
		if len(s.fields) > 0 {
			s.out = append(append(s.out, s.fields...), blank...)
		}
	} else {
		if s.hasData {
			keepError(s.ctx, s.data)
		}
		s.out = append(append(s.out, s.ev...), blank...)
	}
	s.reset()
}

func (s *sseNotes) reset() {
	s.ev, s.fields, s.data = s.ev[:0], s.fields[:0], s.data[:0]
	s.hasData = false
}

// notification reports whether msg is a JSON-RPC notification (a method
// and no id, or a null one, as mcp-go reads it), and returns its method and params as they were sent.
func notification(msg []byte) (method string, params json.RawMessage, ok bool) {
	var m, id, p []byte
	isObject := jsonscan.Members(msg, func(key, value []byte, _, _ int) {
		switch string(key) {
		case "method":
			m = value
		case "id":
			id = value
		case "params":
			p = value
		}
	})
	if !isObject || m == nil || (id != nil && string(id) != "null") || !json.Valid(msg) || json.Unmarshal(m, &method) != nil {
		return "", nil, false
	}
	return method, bytes.Clone(p), true
}
