package wasm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"path/filepath"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/plugins/wasm"
)

// Build a tool folder's Go source, load the folder and call its tool.
func Example() {
	ctx := context.Background()
	dir := "examples/tools/wasm-slugify" // tool.yaml, main.go, go.mod

	if err := wasm.BuildGo(ctx, dir, filepath.Join(dir, "slugify.wasm"), wasm.StyleReactor); err != nil {
		log.Fatal(err) // a *wasm.BuildError carries the compiler's output
	}
	tool, err := toolspec.Load(dir)
	if err != nil {
		log.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	spec, _ := json.Marshal(toolspec.Spec{Dir: abs, Tool: *tool})

	e := wasm.New(wasm.WithCacheDir(filepath.Join(abs, ".cache")))
	defer e.Close()
	if _, err := e.Load(ctx, sdk.LoadRequest{Source: "slugify", Kind: wasm.Kind, Spec: spec}); err != nil {
		log.Fatal(err)
	}
	res, err := e.Call(ctx, sdk.CallRequest{
		Source: "slugify",
		Method: "tools/call",
		Params: json.RawMessage(`{"name":"wasm_slugify","arguments":{"text":"Hello, World!"}}`),
	}, &sdktest.Recorder{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(res))
	// {"content":[{"type":"text","text":"{\"slug\":\"hello-world\"}"}],"structuredContent":{"slug":"hello-world"}}
}
