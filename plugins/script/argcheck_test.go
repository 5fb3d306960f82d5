package script

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// TestArgumentsCheckedBeforeRun: the bundled counter tool (real python3)
// called without its required name, or with a name of the wrong type, is
// refused with -32602 naming the argument, before the script runs; a
// valid call still runs it. Before the check, the script ran and the
// caller got its KeyError, the bare text 'name'.
func TestArgumentsCheckedBeforeRun(t *testing.T) {
	requireCmd(t, "python3")
	h := newHarness(t)
	dir := filepath.Join(testenv.RepoRoot(t), "examples", "tools", "counter")
	h.mustLoad("counter", dir, toolspec.Limits{})
	for _, tt := range []struct {
		name string
		args any
		want string
	}{
		{"missing", map[string]any{}, `missing required argument "name"`},
		{"no arguments", nil, `missing required argument "name"`},
		{"wrong type", map[string]any{"name": 5}, `invalid argument "name"`},
		{"bad optional", map[string]any{"name": "x", "by": "two"}, `invalid argument "by"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			params, _ := json.Marshal(map[string]any{"name": "counter", "arguments": tt.args})
			raw, err := h.c.Call(ctx, sdkCall("counter", params), &sdktest.Recorder{})
			var rpc *sdk.RPCError
			if !errors.As(err, &rpc) || rpc.Code != sdk.CodeInvalidParams || !strings.Contains(rpc.Message, tt.want) {
				t.Fatalf("Call(%v) = %s, %v; want an *sdk.RPCError -32602 with %q", tt.args, raw, err, tt.want)
			}
		})
	}
	if r := h.call("counter", "counter", map[string]any{"name": "x"}, nil); r.IsError || !strings.Contains(r.raw, `"value":1`) {
		t.Fatalf("a valid call: %s, want value 1 (the refused calls must not have run the script)", r.raw)
	}
}
