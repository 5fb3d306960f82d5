package wasm

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// TestArgumentsCheckedBeforeRun: the bundled wasm_word_count (a real
// WASI module) called without its required text, with a text of the
// wrong type, or with arguments that are not an object, is refused with
// -32602 naming the argument before the module runs (it counted nothing
// and answered words 0 before).
func TestArgumentsCheckedBeforeRun(t *testing.T) {
	c, _ := startExec(t)
	load(t, c, "wc", exampleSpec(t, "wasm-wordcount"))
	for _, tt := range []struct{ args, want string }{
		{`{}`, `missing required argument "text" (string: The text to count.)`},
		{`{"text":5}`, `invalid argument "text"`},
		{`{"text":"a","top":"many"}`, `invalid argument "top"`},
		{`[1]`, `arguments must be a JSON object`},
	} {
		raw, err := c.Call(t.Context(), toolCall("wc", "wasm_word_count", tt.args), &sdktest.Recorder{})
		var rpc *sdk.RPCError
		if !errors.As(err, &rpc) || rpc.Code != sdk.CodeInvalidParams || !strings.Contains(rpc.Message, tt.want) {
			t.Errorf("call with %s = %s, %v; want an *sdk.RPCError -32602 with %q", tt.args, raw, err, tt.want)
		}
	}
	raw, err := c.Call(t.Context(), toolCall("wc", "wasm_word_count", `{"text":"a b a"}`), &sdktest.Recorder{})
	if err != nil || !strings.Contains(string(raw), `\"words\":3`) && !strings.Contains(string(raw), `"words":3`) {
		t.Fatalf("a valid call: %s, %v; want words 3", raw, err)
	}
}
