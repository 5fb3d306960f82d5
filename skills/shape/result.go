package shape

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Shaper fits MCP CallToolResults to a byte budget.
type Shaper struct {
	// Budget is the most bytes one result may take; zero shapes nothing.
	Budget int
	// Store, when set, keeps the full output of every shaped result as an
	// artifact whose handle the result names.
	Store *Store
	// Hint tells the model how to narrow the call; empty means a generic one.
	Hint string
}

// Result shapes a CallToolResult: structuredContent is reduced as JSON,
// text items that hold JSON likewise and other text keeps its head and
// tail. Items share the budget. A result that fits, or is not a
// CallToolResult, comes back unchanged. A shaped result carries
// _meta["skillgate/shaped"] = {bytes, budget, artifact}, with a note
// when the executor had cut the output (_meta["skillgate/truncated"]).
func (s *Shaper) Result(raw json.RawMessage) json.RawMessage {
	if s == nil || s.Budget <= 0 || len(raw) <= s.Budget {
		return raw
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(raw, &res) != nil {
		return raw
	}
	var content []map[string]json.RawMessage
	if json.Unmarshal(res["content"], &content) != nil {
		return raw
	}
	artifact := ""
	if s.Store != nil {
		artifact = s.Store.Put(output(res, content))
	}
	sc0 := res["structuredContent"]
	big := 0
	if len(sc0) > 0 {
		big++
	}
	for _, c := range content {
		if string(c["type"]) == `"text"` {
			big++
		}
	}
	share := s.Budget * 9 / 10 / max(big, 1)
	orig := content
	meta := map[string]json.RawMessage{}
	_ = json.Unmarshal(res["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	shaped := map[string]any{"bytes": len(raw), "budget": s.Budget, "artifact": artifact}
	if note := cutNote(meta[truncatedKey], s.Hint); note != "" {
		shaped["note"] = note
	}
	meta["skillgate/shaped"], _ = json.Marshal(shaped)
	res["_meta"], _ = json.Marshal(meta)
	var out []byte
	for range 8 {
		res["structuredContent"] = sc0
		if len(sc0) == 0 {
			delete(res, "structuredContent")
		}
		s.fit(res, cloneItems(orig), share, artifact)
		var err error
		if out, err = json.Marshal(res); err != nil {
			return raw
		}
		if len(out) <= s.Budget || share < 64 {
			break
		}
		// Escaping JSON inside text grows it: try again smaller.
		share = share * s.Budget / len(out) * 9 / 10
	}
	return out
}

// truncatedKey is the _meta key of a result whose output the executor
// cut before shaping saw it: {"dropped": bytes, "cap": bytes kept}
// (plugins/script.TruncatedKey).
const truncatedKey = "skillgate/truncated"

// cutNote says why a result flagged as cut (raw, its truncatedKey value)
// was shaped as it was: what the executor kept is not the whole output,
// so JSON in it is not whole either and is shaped as text.
func cutNote(raw json.RawMessage, hint string) string {
	var cut struct {
		Dropped int64 `json:"dropped"`
		Cap     int64 `json:"cap"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &cut) != nil || cut.Dropped <= 0 {
		return ""
	}
	if hint == "" {
		hint = "narrow the call so that it prints less"
	}
	return fmt.Sprintf("the output was cut at the executor's %d-byte bound (%d more bytes dropped) before it was shaped, "+
		"so it was shaped as text, not as JSON (cut JSON is not valid), and the artifact holds only the kept part; %s", cut.Cap, cut.Dropped, hint)
}

// fit shapes res's structuredContent and content's text items to share
// bytes each.
func (s *Shaper) fit(res map[string]json.RawMessage, content []map[string]json.RawMessage, share int, artifact string) {
	if sc := res["structuredContent"]; len(sc) > 0 {
		out, _ := JSON(sc, share, s.Hint, artifact)
		res["structuredContent"] = out
	}
	for _, c := range content {
		if string(c["type"]) != `"text"` {
			continue
		}
		var text string
		if json.Unmarshal(c["text"], &text) != nil || len(text) <= share {
			continue
		}
		tb := []byte(text)
		if json.Valid(tb) {
			out, notes := JSON(bytes.TrimSpace(tb), share, s.Hint, artifact)
			if len(notes) > 0 || len(out) <= share {
				c["text"], _ = json.Marshal(string(out))
				continue
			}
		}
		c["text"], _ = json.Marshal(Text(text, share, artifact))
	}
	res["content"], _ = json.Marshal(content)
}

// output is what a result's artifact keeps: the output itself, not its
// CallToolResult envelope. That is structuredContent when there is one
// (the text items then repeat it), else the text items, one after the
// other.
func output(res map[string]json.RawMessage, content []map[string]json.RawMessage) []byte {
	if sc := bytes.TrimSpace(res["structuredContent"]); len(sc) > 0 && string(sc) != "null" {
		return sc
	}
	var b bytes.Buffer
	for _, c := range content {
		var text string
		if string(c["type"]) == `"text"` && json.Unmarshal(c["text"], &text) == nil {
			if b.Len() > 0 && !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
				b.WriteByte('\n')
			}
			b.WriteString(text)
		}
	}
	return b.Bytes()
}

func cloneItems(items []map[string]json.RawMessage) []map[string]json.RawMessage {
	out := make([]map[string]json.RawMessage, len(items))
	for i, m := range items {
		out[i] = make(map[string]json.RawMessage, len(m))
		for k, v := range m {
			out[i][k] = v
		}
	}
	return out
}

// ErrNoArtifact: the handle is unknown or expired.
var ErrNoArtifact = errors.New("no such artifact (it may have expired)")

// Defaults of a Store.
const (
	DefaultTTL      = 10 * time.Minute
	DefaultCapacity = 64 << 20
)

// Store keeps full outputs for a while so a client can page through what
// a shaped result left out. It holds at most its capacity in bytes,
// dropping the oldest artifacts first. It is safe for concurrent use.
type Store struct {
	ttl      time.Duration
	capacity int
	now      func() time.Time

	mu    sync.Mutex
	items map[string]*artifact
	order []string
	bytes int
}

type artifact struct {
	data    []byte
	expires time.Time
}

// NewStore returns a store keeping artifacts for ttl, at most capacity
// bytes in all; zero values mean DefaultTTL and DefaultCapacity.
func NewStore(ttl time.Duration, capacity int) *Store {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Store{ttl: ttl, capacity: capacity, now: time.Now, items: map[string]*artifact{}}
}

// Put stores data and returns its handle.
func (s *Store) Put(data []byte) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	h := "art_" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	for s.bytes+len(data) > s.capacity && len(s.order) > 0 {
		s.drop(s.order[0])
	}
	if len(data) > s.capacity {
		return ""
	}
	s.items[h] = &artifact{data: bytes.Clone(data), expires: s.now().Add(s.ttl)}
	s.order = append(s.order, h)
	s.bytes += len(data)
	return h
}

// Chunk is a piece of an artifact.
type Chunk struct {
	Handle string `json:"handle"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
	Data   string `json:"data"`
	// Next is the offset of the next chunk, or -1 at the end.
	Next int `json:"next"`
}

// Read returns up to limit bytes of an artifact from offset, cut so as
// not to split a UTF-8 sequence.
func (s *Store) Read(handle string, offset, limit int) (Chunk, error) {
	s.mu.Lock()
	s.expire()
	a := s.items[handle]
	s.mu.Unlock()
	if a == nil {
		return Chunk{}, fmt.Errorf("%w: %q", ErrNoArtifact, handle)
	}
	if offset < 0 || offset > len(a.data) {
		return Chunk{}, fmt.Errorf("offset %d is outside the artifact's %d bytes", offset, len(a.data))
	}
	if limit <= 0 {
		limit = 16 << 10
	}
	end := min(offset+limit, len(a.data))
	for end < len(a.data) && end > offset && a.data[end]&0xC0 == 0x80 {
		end--
	}
	next := end
	if end >= len(a.data) {
		next = -1
	}
	return Chunk{Handle: handle, Offset: offset, Size: len(a.data), Data: string(a.data[offset:end]), Next: next}, nil
}

func (s *Store) expire() {
	now := s.now()
	for len(s.order) > 0 {
		a := s.items[s.order[0]]
		if a != nil && now.Before(a.expires) {
			return
		}
		s.drop(s.order[0])
	}
}

func (s *Store) drop(h string) {
	if a := s.items[h]; a != nil {
		s.bytes -= len(a.data)
		delete(s.items, h)
	}
	s.order = s.order[1:]
}
