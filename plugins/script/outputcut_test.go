package script

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// rowsTool is a python tool printing {"rows": [...n rows...], "total": n}
// on one line: about 70 bytes a row.
func rowsTool(t *testing.T) string {
	t.Helper()
	code := "import json, sys\nn = json.load(sys.stdin).get('n', 0)\n" +
		"rows = [{'id': i, 'name': 'row %d' % i, 'city': 'Amsterdam', 'score': i % 97} for i in range(n)]\n" +
		"print(json.dumps({'rows': rows, 'total': n}))\n"
	return folder(t, "name: rows\ndescription: d\nruntime: python\nentry: rows.py\n", map[string]string{"rows.py": code})
}

// truncated is a result's _meta["skillgate/truncated"], or nil.
func (r result) truncated() map[string]any {
	m, _ := r.Meta[TruncatedKey].(map[string]any)
	return m
}

// callShaping calls source's tool name as the skills library does when it
// shapes the result: with _meta[MetaShape] set.
func (h *harness) callShaping(source, name string, args any) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": args, "_meta": map[string]any{MetaShape: true}})
	raw, err := h.c.Call(ctx, sdk.CallRequest{Source: source, Method: "tools/call", Params: params}, &sdktest.Recorder{})
	if err != nil {
		h.t.Fatalf("Call %s: %v", name, err)
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		h.t.Fatalf("result %.300s: %v", raw, err)
	}
	r.raw = string(raw)
	return r
}

// A stdout past the output cap comes back cut, and the result says so in
// _meta["skillgate/truncated"] with the bytes dropped and the cap, so a
// consumer need not read the marker line's wording.
func TestOutputCutFlagged(t *testing.T) {
	requireCmd(t, "python3")
	noLeftovers(t)
	h := newHarness(t)
	h.mustLoad("rows", rowsTool(t), toolspec.Limits{OutputCap: 64 << 10})
	r := h.call("rows", "rows", map[string]any{"n": 5000}, nil)
	if r.IsError || r.status() != statusOK || len(r.StructuredContent) > 0 {
		t.Fatalf("result: %.300s", r.raw)
	}
	cut := r.truncated()
	if cut == nil {
		t.Fatalf("no _meta[%q] on a cut result: %.200s", TruncatedKey, r.Meta)
	}
	dropped, _ := cut["dropped"].(float64)
	if cut["cap"] != float64(64<<10) || dropped <= 0 {
		t.Errorf("_meta[%q] = %v; want cap 65536 and the bytes dropped", TruncatedKey, cut)
	}
	if !strings.Contains(r.text(), sprintf("[output truncated: %d more bytes", int64(dropped))) {
		t.Errorf("the text's marker line does not match the flag %v: ...%s", cut, r.text()[len(r.text())-120:])
	}
	// Under the cap: no flag.
	if r := h.call("rows", "rows", map[string]any{"n": 10}, nil); r.truncated() != nil || len(r.StructuredContent) == 0 {
		t.Errorf("a whole output: %.300s", r.raw)
	}
}

// A call asking for shaping (_meta[MetaShape], as the skills library
// sends) keeps output past the output cap whole up to MaxShapedOutput:
// 20,000 JSON rows (~1.4 MB, past the default 1 MiB cap) come back as
// whole structuredContent, not cut text. Past MaxShapedOutput the output
// is cut and flagged with that bound as the cap. The executor leaves no
// temp file behind.
func TestShapingKeepsWholeOutput(t *testing.T) {
	requireCmd(t, "python3")
	noLeftovers(t)
	h := newHarness(t)
	// After the harness, whose plugin sockets go to TMPDIR until it closes.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	h.mustLoad("rows", rowsTool(t), toolspec.Limits{})

	// Without shaping, the cap holds.
	if r := h.call("rows", "rows", map[string]any{"n": 20000}, nil); r.truncated() == nil || len(r.StructuredContent) > 0 {
		t.Fatalf("a call without shaping: %.300s", r.raw)
	}
	r := h.callShaping("rows", "rows", map[string]any{"n": 20000})
	if r.IsError || r.status() != statusOK || r.truncated() != nil {
		t.Fatalf("result: %.300s", r.raw)
	}
	if len(r.StructuredContent) <= DefaultOutputCap {
		t.Fatalf("structuredContent is %d bytes; want the whole output, past the %d-byte cap", len(r.StructuredContent), DefaultOutputCap)
	}
	var out struct {
		Rows  []json.RawMessage `json:"rows"`
		Total int               `json:"total"`
	}
	if err := json.Unmarshal(r.StructuredContent, &out); err != nil || len(out.Rows) != 20000 || out.Total != 20000 {
		t.Fatalf("structuredContent: %d rows, total %d, %v", len(out.Rows), out.Total, err)
	}

	// Past the bound for shaping: cut, and flagged with that bound.
	big := folder(t, "name: big\ndescription: d\nruntime: python\nentry: big.py\n", map[string]string{
		"big.py": "import sys\nsys.stdout.write('[' + ','.join(['1'] * ((17 << 20) // 2)) + ']')\n"})
	h.mustLoad("big", big, toolspec.Limits{})
	r = h.callShaping("big", "big", nil)
	cut := r.truncated()
	if r.IsError || cut == nil || cut["cap"] != float64(MaxShapedOutput) {
		t.Fatalf("past MaxShapedOutput: _meta %v, want %q with cap %d", r.Meta, TruncatedKey, MaxShapedOutput)
	}
	if n := len(r.text()); n < MaxShapedOutput || n > MaxShapedOutput+200 {
		t.Errorf("kept %d bytes of text; want the %d-byte bound and the marker line", n, MaxShapedOutput)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// An argument the tool's inputSchema does not name is refused before the
// script runs, as the other argument errors are (-32602), with the name
// the caller probably meant; a schema that lets other names in
// (additionalProperties) or names no property takes any. Before, the
// misspelt argument was dropped without a word and the script ran with
// its default.
func TestUnknownArgumentRefused(t *testing.T) {
	requireCmd(t, "python3")
	noLeftovers(t)
	h := newHarness(t)
	code := "import json, sys\nargs = json.load(sys.stdin)\nprint('LOUD' if args.get('loud') else 'quiet')\n"
	load := func(name, schema string) {
		dir := folder(t, "name: "+name+"\ndescription: d\nruntime: python\nentry: say.py\ninput_schema: "+schema+"\n", map[string]string{"say.py": code})
		h.mustLoad(name, dir, toolspec.Limits{})
	}
	load("say", "{type: object, properties: {loud: {type: boolean}, text: {type: string}}}")
	load("open", "{type: object, properties: {loud: {type: boolean}}, additionalProperties: true}")
	load("bare", "{type: object}")
	load("none", "{type: object, properties: {}}")

	for _, tt := range []struct {
		source string
		args   map[string]any
		want   string
	}{
		{"say", map[string]any{"lound": true}, `tool say has no argument "lound"; did you mean "loud"?`},
		{"say", map[string]any{"loud": true, "colour": "red"}, `tool say has no argument "colour"; its arguments are loud, text`},
		{"none", map[string]any{"loud": true}, `tool none has no argument "loud"; it takes no arguments`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		params, _ := json.Marshal(map[string]any{"name": tt.source, "arguments": tt.args})
		raw, err := h.c.Call(ctx, sdkCall(tt.source, params), &sdktest.Recorder{})
		cancel()
		var rpc *sdk.RPCError
		if !errors.As(err, &rpc) || rpc.Code != sdk.CodeInvalidParams || rpc.Message != tt.want {
			t.Errorf("%s %v = %s, %v; want an *sdk.RPCError -32602 %q", tt.source, tt.args, raw, err, tt.want)
		}
	}
	for _, source := range []string{"say", "open", "bare"} {
		args := map[string]any{"loud": true}
		if source != "say" {
			args["extra"] = 1
		}
		if r := h.call(source, source, args, nil); r.IsError || r.text() != "LOUD" {
			t.Errorf("%s %v: %s, want LOUD", source, args, r.raw)
		}
	}
}
