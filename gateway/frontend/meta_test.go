package frontend

import (
	"encoding/json"
	"maps"
	"testing"
)

// TestSplitMeta: the progress token comes out, the protocol's and the
// gateway's own members stay, the rest goes on in its order, and a key
// given twice counts once with its last value (as a decoder reads it).
func TestSplitMeta(t *testing.T) {
	for _, tc := range []struct {
		name, in, token, meta string
		ok                    bool
	}{
		{"absent", ``, ``, ``, true},
		{"null", `null`, ``, ``, true},
		{"empty", `{}`, ``, ``, true},
		{"token only", `{"progressToken": 7}`, `7`, ``, true},
		{"modern client", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"x"},"progressToken":"p1"}`, `"p1"`, ``, true},
		{"injected gateway member", `{"skillgate.dev/services":{"KV_HOST":"evil"},"trace":"t"}`, ``, `{"trace":"t"}`, true},
		{"order kept", `{"z":1,"progressToken":2,"a":{"b":[1,2]}}`, `2`, `{"z":1,"a":{"b":[1,2]}}`, true},
		{"duplicate key", `{"a":1,"b":2,"a":3}`, ``, `{"b":2,"a":3}`, true},
		{"escaped key", `{"progress\u0054oken":"p","x\u002fy":1}`, `"p"`, `{"x/y":1}`, true},
		{"not an object", `"text"`, ``, ``, false},
		{"array", `[1]`, ``, ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token, meta, ok := splitMeta(json.RawMessage(tc.in))
			if ok != tc.ok || string(token) != tc.token || string(meta) != tc.meta {
				t.Fatalf("splitMeta(%s) = %s, %s, %v; want %s, %s, %v", tc.in, token, meta, ok, tc.token, tc.meta, tc.ok)
			}
			if !ok || tc.in == "" || tc.in == "null" {
				return
			}
			// What goes on reads as what a decoder makes of the input, less
			// the token and the hop's members.
			var in, out map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			maps.DeleteFunc(in, func(k string, _ json.RawMessage) bool { return k == "progressToken" || hopMeta(k) })
			if len(meta) > 0 {
				if err := json.Unmarshal(meta, &out); err != nil {
					t.Fatalf("forwarded _meta %s: %v", meta, err)
				}
			}
			if len(in) != len(out) {
				t.Fatalf("forwarded %v; a decoder reads %v", out, in)
			}
			for k, v := range in {
				if string(out[k]) != string(v) {
					t.Errorf("member %s: forwarded %s, want %s", k, out[k], v)
				}
			}
		})
	}
}

// TestSplitMetaAllocs: a modern client's _meta (only the protocol's own
// members and a token) is split without allocating: it rides on every call.
func TestSplitMetaAllocs(t *testing.T) {
	raw := json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1}`)
	if n := testing.AllocsPerRun(100, func() {
		if _, meta, ok := splitMeta(raw); !ok || meta != nil {
			t.Fatal("unexpected split")
		}
	}); n != 0 {
		t.Errorf("%v allocations per split; want 0", n)
	}
}

// TestBuildParamsNullArguments: arguments written as null (the Go SDK's
// nil map) are left out, as the fast path leaves them out; an object goes on.
func TestBuildParamsNullArguments(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{``, `{"name":"t"}`},
		{`null`, `{"name":"t"}`},
		{`{}`, `{"name":"t","arguments":{}}`},
		{`{"a":1}`, `{"name":"t","arguments":{"a":1}}`},
	} {
		got, _ := buildParams(map[string]any{"name": "t"}, "arguments", json.RawMessage(tc.args), nil)
		if string(got) != tc.want {
			t.Errorf("arguments %q: params %s; want %s", tc.args, got, tc.want)
		}
	}
}
