// Package script is the built-in "script" executor: each source is one tool
// folder (see plugins/toolspec) whose entry is run by an interpreter —
// python, node, bash, ruby — or executed itself (runtime exec).
//
// The spec of a source (LoadRequest.Spec, kind "script") is a toolspec.Spec:
//
//	{"dir": "/srv/tools/word_count",
//	 "tool": {"name": "word_count", "description": "Count words.", "runtime": "python", "entry": "main.py"},
//	 "limits": {"timeout": "60s", "stall_timeout": "20s", "output_cap": 1048576, "concurrency": 4}}
//
// Two protocols are spoken with a script (docs/SCRIPTS.md has the details):
//
//   - simple: the arguments arrive as JSON on stdin (and in argv where the
//     tool's args say so); stdout is the result (a JSON object becomes
//     structuredContent, anything else text); stderr lines are log messages,
//     or progress when a line is {"progress": n, ...}.
//   - jsonrpc: newline-delimited JSON-RPC 2.0. The executor sends tools/call;
//     the script may send notifications/progress and notifications/message,
//     call other tools (tools/call) and read and write its state
//     (state/get, state/set) before it answers.
//
// In mode per-call a fresh process serves each call; in mode persistent
// (jsonrpc only) one warm process serves every call and is started again
// when it dies.
//
// Processes get no shell, a clean environment, their own process group
// (SIGTERM, then SIGKILL), bounded output retention, a stall timeout (no
// output for stall_timeout: status "stalled") distinct from the call timeout
// (still printing at the ceiling: status "timeout"), a concurrency cap, and
// optionally a bubblewrap sandbox and setrlimit limits. Every result carries
// its status in _meta["skillgate/status"].
//
// Out of process, like every executor:
//
//	func main() {
//		e := script.New()
//		defer e.Close()
//		sdk.Serve(e)
//	}
package script
