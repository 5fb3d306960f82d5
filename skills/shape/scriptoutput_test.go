package shape_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/script"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/skills/shape"
)

// runScript loads code as a python script tool in the real script
// executor and calls it the way the skills library does for a result it
// shapes (_meta[script.MetaShape]).
func runScript(t *testing.T, code string, args any) json.RawMessage {
	t.Helper()
	_, err := exec.LookPath("python3")
	testenv.Require(t, "python3", err == nil, "run ./scripts/test-deps.sh")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.py"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	e := script.New(script.WithRoot(t.TempDir()), script.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer e.Close()
	spec, _ := json.Marshal(toolspec.Spec{Dir: dir, Tool: toolspec.Tool{Name: "run", Description: "d", Runtime: toolspec.RuntimePython, Entry: "run.py"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := e.Load(ctx, sdk.LoadRequest{Source: "s", Kind: script.Kind, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(map[string]any{"name": "run", "arguments": args, "_meta": map[string]any{script.MetaShape: true}})
	raw, err := e.Call(ctx, sdk.CallRequest{Source: "s", Method: "tools/call", Params: params}, &sdktest.Recorder{})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// A skill script printing 20,000 JSON rows (~1.4 MB, past the executor's
// 1 MiB output cap) is shaped as JSON: valid structuredContent whose rows
// carry _truncated with kept and total, and an artifact holding the whole
// output. Past the executor's bound for shaping, the output is cut and
// the shaped result says so, and why it is text. Before, the output came
// back as cut text, shaped as text, the artifact held the cut 1 MiB.
func TestScriptOutputPastCapShaped(t *testing.T) {
	const rows = "import json\nrows = [{'id': i, 'name': 'row %d' % i, 'city': 'Amsterdam', 'score': i % 97} for i in range(20000)]\n" +
		"print(json.dumps({'rows': rows, 'total': 20000}))\n"
	raw := runScript(t, rows, nil)
	store := shape.NewStore(0, 0)
	sh := shape.Shaper{Budget: 80_000, Store: store}
	var res struct {
		StructuredContent json.RawMessage            `json:"structuredContent"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	out := sh.Result(raw)
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Rows      []json.RawMessage `json:"rows"`
		Total     int               `json:"total"`
		Truncated struct {
			Kept  int `json:"kept"`
			Total int `json:"total"`
		} `json:"_truncated"`
	}
	if err := json.Unmarshal(res.StructuredContent, &sc); err != nil || sc.Total != 20000 || sc.Truncated.Total != 20000 ||
		sc.Truncated.Kept == 0 || sc.Truncated.Kept != len(sc.Rows) {
		t.Fatalf("shaped structuredContent (%v): %.400s", err, res.StructuredContent)
	}
	if len(out) > 80_000 {
		t.Errorf("shaped result is %d bytes; budget 80000", len(out))
	}
	var meta struct {
		Artifact string `json:"artifact"`
	}
	_ = json.Unmarshal(res.Meta["skillgate/shaped"], &meta)
	art := meta.Artifact
	chunk, err := store.Read(art, 0, 64)
	if err != nil || chunk.Size <= 1<<20 {
		t.Fatalf("artifact %q: %d bytes, %v; want the whole output, past 1 MiB", art, chunk.Size, err)
	}
	if strings.Contains(string(out), "skillgate/truncated") {
		t.Errorf("a whole output is flagged as cut: %.300s", out)
	}

	// Past the bound: cut, flagged, and the shaped result says why it is
	// not JSON.
	big := runScript(t, "import sys\nsys.stdout.write('[' + ','.join(['1'] * ((17 << 20) // 2)) + ']')\n", nil)
	out = sh.Result(big)
	var cut struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(out, &cut); err != nil {
		t.Fatal(err)
	}
	var shaped struct {
		Note string `json:"note"`
	}
	_ = json.Unmarshal(cut.Meta["skillgate/shaped"], &shaped)
	if cut.Meta[script.TruncatedKey] == nil || !strings.Contains(shaped.Note, "cut") || !strings.Contains(shaped.Note, "16777216") {
		t.Fatalf("a cut output's shaped _meta: %s", cut.Meta)
	}
}
