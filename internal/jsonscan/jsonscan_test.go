package jsonscan

import (
	"encoding/json"
	"reflect"
	"testing"
)

func FuzzMembers(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1,"b":[1,{"c":"}"}],"d":"\\\""}`, `{"_meta":{"x":null}}`, `{"\u0041":true}`, `[1]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var want map[string]json.RawMessage
		isObject := json.Unmarshal(b, &want) == nil && want != nil // null decodes into a nil map
		got := map[string]json.RawMessage{}
		ok := Members(b, func(key, value []byte, start, end int) {
			if string(b[start:end]) != string(value) {
				t.Fatalf("offsets %d:%d do not match the value %q", start, end, value)
			}
			got[string(key)] = value
		})
		if ok != isObject {
			t.Fatalf("Members said object=%v, json.Unmarshal %v: %s", ok, isObject, b)
		}
		if !ok {
			return
		}
		for k, v := range want {
			var a, b2 any
			_ = json.Unmarshal(v, &a)
			_ = json.Unmarshal(got[k], &b2)
			if !reflect.DeepEqual(a, b2) {
				t.Fatalf("member %q: got %s, want %s", k, got[k], v)
			}
		}
	})
}

func FuzzAppendString(f *testing.F) {
	for _, seed := range []string{"", "progressToken", `a"b`, `back\slash`, "tab\there", "<&>", "é", "\u2028", "\xff"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString([]byte("x"), s)
		if out[0] != 'x' {
			t.Fatalf("AppendString overwrote dst: %q", out)
		}
		var got string
		if err := json.Unmarshal(out[1:], &got); err != nil {
			t.Fatalf("AppendString(%q) = %s, not a JSON string: %v", s, out[1:], err)
		}
		var want string
		b, _ := json.Marshal(s)
		_ = json.Unmarshal(b, &want)
		if got != want {
			t.Fatalf("AppendString(%q) decodes to %q, encoding/json's to %q", s, got, want)
		}
	})
}

func TestKind(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`: "an object", ` [1]`: "an array", `"s"`: "a string", `true`: "a boolean",
		`false`: "a boolean", `null`: "null", `-1.5`: "a number", "\n\t": "nothing", ``: "nothing",
	} {
		if got := Kind([]byte(in)); got != want {
			t.Errorf("Kind(%q) = %q, want %q", in, got, want)
		}
	}
}
