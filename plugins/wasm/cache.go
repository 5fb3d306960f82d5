package wasm

import (
	"context"
	"fmt"
	"os"

	"github.com/tetratelabs/wazero"
)

// runtimeConfig is the wazero configuration every tool runs under, less
// its memory limit. The compilation cache is keyed by what changes the
// machine code (the module, wazero's version, the CPU, and the
// close-on-context-done checks), so Precompile must use the same.
func runtimeConfig(cache wazero.CompilationCache) wazero.RuntimeConfig {
	rc := wazero.NewRuntimeConfig().WithCloseOnContextDone(true)
	if cache != nil {
		rc = rc.WithCompilationCache(cache)
	}
	return rc
}

// Precompile compiles the module at path into the compilation cache folder
// cacheDir (the executor's WithCacheDir), so the first Load of a tool
// running it skips compiling. A build step calls it right after BuildGo or
// BuildRust; compiling a Go guest takes a second or more, loading it from
// the cache a few tens of milliseconds.
func Precompile(ctx context.Context, cacheDir, path string) error {
	bin, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		return fmt.Errorf("precompile %s: cache folder: %w", path, err)
	}
	defer cache.Close(ctx)
	rt := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(cache))
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, bin); err != nil {
		return fmt.Errorf("precompile %s: %w", path, err)
	}
	return nil
}
