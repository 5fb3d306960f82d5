package frontend

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/internal/jsonscan"
)

// Results and lists reach clients as the sources' own bytes.
//
// mcp-go's server only speaks typed results, and its types drop what they
// do not know (a new content type even fails the whole call). So a handler
// stashes the source's raw result and gives mcp-go a small typed stand-in
// carrying a marker; when mcp-go's answer leaves (over HTTP or stdio), the
// stand-in is replaced by the stashed bytes. Members mcp-go adds for the
// client's protocol era (resultType, _meta serverInfo) are kept. List
// answers get the catalog snapshot's pre-encoded arrays.

// markerKey is the _meta member (or resource URI) that carries a token.
const markerKey = "skillgate.dev/raw"

var markerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`sgraw-[0-9a-z]+-[0-9]+`) })

// stash holds raw results until their answer is written.
type stash struct {
	prefix string
	n      atomic.Uint64
	m      sync.Map // token -> json.RawMessage
}

func newStash() *stash { return newStashOf("sgraw") }

// newStashOf is a stash whose tokens begin with kind (markerRE finds
// "sgraw" ones in answers).
func newStashOf(kind string) *stash {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &stash{prefix: fmt.Sprintf("%s-%x-", kind, b)}
}

type stashed struct {
	raw json.RawMessage
	at  time.Time
}

// stashTTL bounds how long a result whose answer was never written (the
// client went away) is kept.
const stashTTL = 10 * time.Minute

func (s *stash) put(raw json.RawMessage) string {
	n := s.n.Add(1)
	now := time.Now()
	if n%256 == 0 {
		s.m.Range(func(k, v any) bool {
			if now.Sub(v.(stashed).at) > stashTTL {
				s.m.Delete(k)
			}
			return true
		})
	}
	tok := s.prefix + strconv.FormatUint(n, 10)
	s.m.Store(tok, stashed{raw: raw, at: now})
	return tok
}

func (s *stash) take(tok string) (json.RawMessage, bool) {
	v, ok := s.m.LoadAndDelete(tok)
	if !ok {
		return nil, false
	}
	return v.(stashed).raw, true
}

// markedMeta is the _meta of a typed stand-in.
func markedMeta(tok string) *mcp.Meta {
	return &mcp.Meta{AdditionalFields: map[string]any{markerKey: tok}}
}

// listKeys maps a list method to its result's array member.
var listKeys = map[string]string{
	string(mcp.MethodToolsList):              "tools",
	string(mcp.MethodPromptsList):            "prompts",
	string(mcp.MethodResourcesList):          "resources",
	string(mcp.MethodResourcesTemplatesList): "resourceTemplates",
}

// rewrites reports whether answers to method are rewritten.
func rewrites(method string) bool {
	switch method {
	case string(mcp.MethodToolsCall), string(mcp.MethodPromptsGet), string(mcp.MethodResourcesRead),
		string(mcp.MethodCompletionComplete):
		return true
	}
	_, ok := listKeys[method]
	return ok
}

// listJSON is the list array answering method for req.
func (s *Server) listJSON(snap *catalog.Snapshot, method string, req disclosure.Request) []byte {
	switch method {
	case string(mcp.MethodToolsList):
		return s.Disclosure().ToolsJSON(snap, req)
	case string(mcp.MethodPromptsList):
		return s.Disclosure().OtherJSON(snap, catalog.Prompt, req)
	case string(mcp.MethodResourcesList):
		return s.Disclosure().OtherJSON(snap, catalog.Resource, req)
	case string(mcp.MethodResourcesTemplatesList):
		return s.Disclosure().OtherJSON(snap, catalog.ResourceTemplate, req)
	}
	return nil
}

// envelope is a JSON-RPC response.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// rewrite returns msg with its result replaced by the sources' bytes, or
// msg itself when it is not an answer the front end rewrites. method is the
// request's method, req who made it.
func (s *Server) rewrite(msg []byte, method string, req disclosure.Request) []byte {
	if method == string(mcp.MethodToolsCall) {
		if out, ok := s.unknownToolAnswer(msg, req); ok {
			return out
		}
	}
	key, isList := listKeys[method]
	if !isList && !bytes.Contains(msg, []byte(s.raw.prefix)) {
		return msg // not an answer with a stand-in (e.g. a notification)
	}
	var env envelope
	if err := json.Unmarshal(msg, &env); err != nil || len(env.Result) == 0 || len(env.ID) == 0 {
		return msg
	}
	var res []byte
	if isList {
		var m map[string]json.RawMessage
		if json.Unmarshal(env.Result, &m) != nil {
			return msg
		}
		delete(m, key)
		res = insertMembers([]byte("{}"), append([]member{{key, s.listJSON(s.snap.Load(), method, req)}}, sortedMembers(m)...))
	} else {
		tok := markerRE().Find(env.Result)
		if tok == nil {
			return msg
		}
		raw, ok := s.raw.take(string(tok))
		if !ok {
			return msg
		}
		res = mergeResult(raw, env.Result)
	}
	out := make([]byte, 0, len(res)+len(env.ID)+40)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, env.ID...)
	out = append(out, `,"result":`...)
	out = append(out, res...)
	return append(out, '}')
}

// member is one object member: a key and its encoded value.
type member struct {
	key string
	val []byte
}

func sortedMembers(m map[string]json.RawMessage) []member {
	out := make([]member, 0, len(m))
	for k, v := range m {
		out = append(out, member{k, v})
	}
	slices.SortFunc(out, func(a, b member) int { return strings.Compare(a.key, b.key) })
	return out
}

// insertMembers puts members at the front of the JSON object obj, leaving
// the rest of its bytes as they are.
func insertMembers(obj []byte, members []member) []byte {
	if len(members) == 0 {
		return obj
	}
	obj = bytes.TrimSpace(obj)
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	size := len(obj) + 2
	for _, m := range members {
		size += len(m.key) + len(m.val) + 8 // quotes, colon, comma, some escaping
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(jsonscan.AppendString(out, m.key), ':')
		out = append(out, m.val...)
	}
	if len(inner) > 0 {
		out = append(out, ',')
		out = append(out, inner...)
	}
	return append(out, '}')
}

// memberSpan finds the value of the top-level member key in the JSON
// object obj, as byte offsets.
func memberSpan(obj []byte, key string) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, 0, false
		}
		if k, _ := t.(string); k == key {
			end := int(dec.InputOffset())
			return end - len(v), end, true
		}
	}
	return 0, 0, false
}

// mergeResult keeps raw as the source sent it and adds what mcp-go put in
// typed that raw lacks (resultType and the ttlMs and cacheScope cache hints
// of the 2026-07-28 era,
// _meta members such as serverInfo), leaving out the stand-in's marker.
// serverInfo is the gateway's (mcp-go's) even where the source sent its
// own. The source's own members keep their bytes and order. For a client
// of the 2025-11-25 era or older, raw loses what only 2026-07-28 results
// carry (legacyResult).
func mergeResult(raw, typed []byte) []byte {
	if !bytes.Contains(typed, []byte(`"resultType"`)) && !bytes.Contains(typed, []byte(`"io.modelcontextprotocol/`)) {
		return legacyResult(raw) // 2025-11-25 and older: mcp-go added nothing of its own
	}
	var t, r map[string]json.RawMessage
	if json.Unmarshal(typed, &t) != nil || json.Unmarshal(raw, &r) != nil {
		return raw
	}
	var add []member
	for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
		if v, ok := t[k]; ok {
			if _, has := r[k]; !has {
				add = append(add, member{k, v})
			}
		}
	}
	var tm map[string]json.RawMessage
	_ = json.Unmarshal(t["_meta"], &tm)
	delete(tm, markerKey)
	out := raw
	if len(tm) > 0 {
		if start, end, ok := memberSpan(raw, "_meta"); ok {
			var rm map[string]json.RawMessage
			if json.Unmarshal(raw[start:end], &rm) != nil {
				return raw
			}
			meta := raw[start:end]
			if info, ok := tm[serverInfoKey]; ok && rm[serverInfoKey] != nil {
				if s, e := valueOf(meta, serverInfoKey); s >= 0 {
					meta = splice(meta, s, e, info)
				}
			}
			for k := range rm {
				delete(tm, k)
			}
			meta = insertMembers(meta, sortedMembers(tm))
			out = append(append(append([]byte{}, raw[:start]...), meta...), raw[end:]...)
		} else {
			add = append(add, member{"_meta", insertMembers([]byte("{}"), sortedMembers(tm))})
		}
	}
	return insertMembers(out, add)
}
