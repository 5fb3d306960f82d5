// Package sdk is the stable contract between the skillgate gateway and its
// executor plugins.
//
// An executor turns specs (an MCP server entry, a tool folder, a wasm module)
// into MCP definitions and runs calls against them. It runs as its own process,
// launched by the gateway through hashicorp/go-plugin, and speaks the gRPC
// protocol described in internal/pb/executor.proto. A plugin author implements
// [Executor] and hands it to [Serve]:
//
//	type hello struct{}
//
//	func (hello) Info(ctx context.Context) (sdk.Info, error) {
//		return sdk.Info{Name: "hello", Version: "1.0.0", Kinds: []string{"hello"}}, nil
//	}
//	// ... Load, Unload, Call ...
//
//	func main() { sdk.Serve(hello{}) }
//
// MCP payloads cross the boundary as raw JSON ([json.RawMessage]) so that a
// field added by a newer MCP revision is never lost in a re-encode.
//
// Capabilities beyond [Executor] are optional interfaces: [Watcher] for
// sources that change on their own, [HostUser] for the gateway's services,
// and [Shutdowner] for an executor that must stop what it started before
// its process ends, which Serve calls within the gateway's kill window
// however the process ends (the gateway stops the plugin, SIGTERM, or the
// gateway is gone).
//
// Before shipping, check your tool definitions with [ValidateTools]: names
// LLM APIs accept, no duplicates, object schemas.
//
// A few helpers read and write the JSON that most calls need, still as raw
// JSON: [ParseToolCall] and [ToolCall.DecodeArguments] for a tools/call's
// params and arguments, [UnknownTool] for a tool the source does not have,
// [TextResult], [ErrorResult] and [StructuredResult] for its result, and
// [ResourceResult] and [PromptResult] for resources/read and prompts/get.
//
// The same [Executor] interface is what the gateway calls, whether the
// executor runs in another process or in the gateway's own process.
// Package sdktest runs an executor over a real gRPC connection inside a
// test, as the gateway would, and fails the test where the gateway would
// refuse the executor. The gateway's end of the connection (the go-plugin
// handshake and plugin sets, and the client that calls an executor) is
// package hostside, which executors do not use.
//
// This package never imports anything else of the skillgate repository; it
// depends only on go-plugin, gRPC and protobuf.
package sdk
