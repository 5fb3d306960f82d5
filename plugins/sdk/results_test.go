package sdk_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

func TestParseToolCall(t *testing.T) {
	for _, tc := range []struct {
		params, name, args string
		problem            string // in the *RPCError's message; "" means no error
	}{
		{`{"name":"greet","arguments":{"name":"Ada"}}`, "greet", `{"name":"Ada"}`, ""},
		{`{"name":"greet"}`, "greet", "", ""},
		{`{"name":"greet","arguments":null,"_meta":{"x":1}}`, "greet", "", ""},
		{`{"name":"greet","arguments": {} }`, "greet", `{}`, ""},
		{`{"arguments":{}}`, "", "", `"name" is missing or empty`},
		{`{"name":""}`, "", "", `"name" is missing or empty`},
		{`{"name":7}`, "", "", "invalid tools/call params"},
		{`[]`, "", "", "invalid tools/call params"},
		{``, "", "", "invalid tools/call params"},
		{`{"name":"greet","arguments":[1]}`, "", "", `the arguments of tool "greet" must be a JSON object, not [1]`},
	} {
		call, err := sdk.ParseToolCall(sdk.CallRequest{Method: "tools/call", Params: json.RawMessage(tc.params)})
		if tc.problem != "" {
			var rpcErr *sdk.RPCError
			if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeInvalidParams || !strings.Contains(rpcErr.Message, tc.problem) {
				t.Errorf("%s: err = %v, want an *RPCError %d saying %q", tc.params, err, sdk.CodeInvalidParams, tc.problem)
			}
			continue
		}
		if err != nil || call.Name != tc.name || string(call.Arguments) != tc.args {
			t.Errorf("%s: %q %s, %v; want %q %s", tc.params, call.Name, call.Arguments, err, tc.name, tc.args)
		}
	}
}

func TestDecodeArguments(t *testing.T) {
	type in struct {
		Name string `json:"name"`
		From int    `json:"from"`
	}
	for _, tc := range []struct {
		args    string
		want    in
		problem string // "" means no error
	}{
		{``, in{From: 3}, ""}, // absent: the defaults stay
		{`{"name":"Ada"}`, in{Name: "Ada", From: 3}, ""},
		{`{"name":"Ada","from":5}`, in{Name: "Ada", From: 5}, ""},
		{`{"nme":"Ada"}`, in{}, `arguments of tool "t": unknown field "nme"`},
		{`{"from":"5"}`, in{}, `arguments of tool "t": "from" must be an integer, not string`},
		{`{"from":1.5}`, in{}, `arguments of tool "t": "from" must be an integer, not number 1.5`},
		{`{"name":"Ada"} {"name":"Bob"}`, in{}, `arguments of tool "t": unexpected data after the arguments object`},
	} {
		got := in{From: 3}
		var args json.RawMessage
		if tc.args != "" {
			args = json.RawMessage(tc.args)
		}
		err := sdk.ToolCall{Name: "t", Arguments: args}.DecodeArguments(&got)
		if tc.problem != "" {
			if err == nil || err.Error() != tc.problem {
				t.Errorf("%s: err = %v, want %q", tc.args, err, tc.problem)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}

func TestResults(t *testing.T) {
	structured, err := sdk.StructuredResult(map[string]any{"greeting": "Hello, <Ada> & co"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sdk.StructuredResult(json.RawMessage(` {"n": 1} `))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  json.RawMessage
		want string
	}{
		{"TextResult", sdk.TextResult(`say "hi" <b>`), `{"content":[{"type":"text","text":"say \"hi\" <b>"}]}`},
		{"ErrorResult", sdk.ErrorResult("no such city"), `{"content":[{"type":"text","text":"no such city"}],"isError":true}`},
		{"StructuredResult", structured,
			`{"content":[{"type":"text","text":"{\"greeting\":\"Hello, <Ada> & co\"}"}],"structuredContent":{"greeting":"Hello, <Ada> & co"}}`},
		{"StructuredResult of raw JSON", raw, `{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`},
		{"ResourceResult", sdk.ResourceResult("rows://a/file", "application/yaml", "a: 1\n"),
			`{"contents":[{"uri":"rows://a/file","mimeType":"application/yaml","text":"a: 1\n"}]}`},
		{"ResourceResult without a MIME type", sdk.ResourceResult("x:1", "", "t"), `{"contents":[{"uri":"x:1","text":"t"}]}`},
		{"PromptResult", sdk.PromptResult("Explain a row", "Explain row 7"),
			`{"description":"Explain a row","messages":[{"role":"user","content":{"type":"text","text":"Explain row 7"}}]}`},
		{"PromptResult without a description", sdk.PromptResult("", "hi"), `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`},
	} {
		if string(tc.got) != tc.want {
			t.Errorf("%s = %s, want %s", tc.name, tc.got, tc.want)
		}
		if !json.Valid(tc.got) {
			t.Errorf("%s is not valid JSON: %s", tc.name, tc.got)
		}
	}

	for _, v := range []any{nil, []int{1}, "text", make(chan int)} {
		if res, err := sdk.StructuredResult(v); err == nil {
			t.Errorf("StructuredResult(%#v) = %s, want an error: structuredContent must be an object", v, res)
		}
	}
}

func TestUnknownTool(t *testing.T) {
	var err error = sdk.UnknownTool("wave")
	var rpcErr *sdk.RPCError
	if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeInvalidParams || rpcErr.Message != `unknown tool "wave"` {
		t.Fatalf("UnknownTool = %#v", err)
	}
}
