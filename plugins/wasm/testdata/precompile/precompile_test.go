// Package precompile fills a wasm compilation cache folder for the wasm
// executor's tests:
//
//	go test ./testdata/precompile -run TestPrecompile -args CACHE_DIR MODULE.wasm...
//
// The executor's tests run under -race, which makes wazero's compiler some
// ten times slower; this test binary is built without it, so a test run
// compiles each guest once, quickly, and the executors under test load them
// from the cache, as after a restart. It is a test rather than a program
// because wazero keys its cache by its own version, which it reads from the
// binary's build information, and a test binary reports another one
// ("dev") than a program does.
package precompile

import (
	"context"
	"flag"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/plugins/wasm"
)

func TestPrecompile(t *testing.T) {
	args := flag.Args()
	if len(args) < 2 {
		t.Skip("usage: go test -run TestPrecompile -args CACHE_DIR MODULE.wasm...")
	}
	var wg sync.WaitGroup
	for _, m := range args[1:] {
		wg.Go(func() {
			if err := wasm.Precompile(context.Background(), args[0], m); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
