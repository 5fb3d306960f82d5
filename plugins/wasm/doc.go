// Package wasm is the built-in "wasm" executor: each source is a tool folder
// (see plugins/toolspec) whose entry is a WebAssembly module, run by wazero
// inside the executor's process. It is the only package of skillgate that
// imports wazero.
//
// A module is one of two styles (tool.yaml's wasm.style):
//
//   - command (the default): a WASI command module, such as a Go program
//     built with GOOS=wasip1 GOARCH=wasm. Every call gets a fresh instance:
//     the arguments are JSON on stdin, _start runs, and what the module
//     printed on stdout is the result. A non-zero exit code fails the call.
//   - reactor: a module with an _initialize export and the function named by
//     wasm.function, such as a Go package built with -buildmode=c-shared
//     whose function is marked //go:wasmexport. Initialized instances are
//     kept warm in a pool, one call at a time each; a call resets the
//     instance's stdin to its arguments (then EOF) and its stdout, calls the
//     function (no parameters, an i32 result: 0 for success), and reads the
//     result from stdout.
//
// In both styles, stdout holding a JSON object becomes the result's
// structuredContent (and its text); anything else is text. Each stderr line
// is a progress report when it is a JSON object with "progress" (and
// "total", "message"), a log message at its level when it is a JSON object
// with "level" and "message", and a log message at level info otherwise.
// Every result carries a status in _meta["skillgate/status"]: ok, or for a
// module that fails, traps, runs past its timeout or into its memory limit
// error, trap, timeout or memory_limit, with isError set and a text that
// gives the reason, the stdout written so far and the start and end of
// stderr.
//
// A module gets nothing it was not granted: no files (wasm.mounts grants
// read-only directories, jailed so that neither ".." nor a symlink leads out
// of them), no environment variables (env and secrets name variables of the
// executor's environment, wasm.env gives literal ones), no network. It does
// get the real clock and crypto/rand randomness, which wazero leaves out by
// default. Its linear memory is capped by wasm.memory_limit (default
// 256 MiB) and every call by the tool's timeout (default 60s); a running
// call is stopped when it reaches it, or when its client cancels it.
//
// Compiled machine code is kept in a compilation cache folder (WithCacheDir),
// so a restarted executor loads a module in milliseconds instead of
// compiling it again. BuildGo and BuildRust compile a tool's source to a
// module; Precompile puts a module into the cache right after.
//
// The executor runs out of process like any plugin:
//
//	func main() {
//		e := wasm.New()
//		defer e.Close()
//		sdk.Serve(e)
//	}
//
// or in the gateway's process, through the same sdk.Executor interface.
// docs/WASM.md is the guide for tool authors.
package wasm
