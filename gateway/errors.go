package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/gateway/frontend"
	"github.com/skillgate/skillgate/pipelines"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Sentinel errors.
var (
	// ErrUnknownExecutor means a source names an executor that is neither
	// built in nor found in a plugins dir.
	ErrUnknownExecutor = errors.New("unknown executor")
	// ErrClosed means the gateway was closed.
	ErrClosed = errors.New("gateway closed")
	// ErrUnknownProfile means a profile was asked for that the config lacks.
	ErrUnknownProfile = errors.New("unknown profile")
)

// unknownToolError is the error of a call of a tool the catalog lacks: the
// JSON-RPC error it is for clients and executors (errors.As finds the
// *sdk.RPCError, which crosses the plugin boundary as it is), reading as
// its message and matching frontend.ErrUnknownTool.
type unknownToolError struct{ rpc *sdk.RPCError }

func (e *unknownToolError) Error() string   { return e.rpc.Message }
func (e *unknownToolError) Unwrap() []error { return []error{e.rpc, frontend.ErrUnknownTool} }

// toolPending says why tool name, which the catalog lacks, may still come:
// the source whose namespace it starts with is not ready. It returns that
// source and the reason (as unknownToolHint words it), or "" twice.
func (g *Gateway) toolPending(name string) (source, why string) {
	st, ok := g.ownerNotReady(name, false)
	if !ok {
		return "", ""
	}
	return st.Name, g.unknownToolHint(name)
}

// serverPending says why the configured server name has no tools: it is
// failed or starting ("server flaky is failed: <its last error>"). It is
// "" for a ready server and for any other name.
func (g *Gateway) serverPending(name string) string {
	g.mu.Lock()
	s := g.sources[name]
	g.mu.Unlock()
	if s == nil || s.server == nil {
		return ""
	}
	st := s.status()
	if st.State == "ready" {
		return ""
	}
	return fmt.Sprintf("server %s is %s", name, stateWhy(st))
}

// chainRefusal words the call-chain guard's refusal (pipelines.Enter) for
// what made the call: a pipeline's step, or a tool calling back through
// the gateway (an executor's host CallTool), which is no pipeline.
func (g *Gateway) chainRefusal(err error) string {
	var ce *pipelines.ChainError
	if !errors.As(err, &ce) || !errors.Is(err, pipelines.ErrRecursion) || len(ce.Chain) == 0 {
		return err.Error()
	}
	chain := strings.Join(append(slices.Clone(ce.Chain), ce.Tool), " -> ")
	msg := fmt.Sprintf("refusing to call %s: it is already running in this call chain (%s); ", ce.Tool, chain)
	caller := ce.Chain[len(ce.Chain)-1]
	what := g.toolKind(caller)
	switch {
	case what == "pipeline" && caller == ce.Tool:
		return msg + "a pipeline must not call itself"
	case what == "pipeline":
		return msg + fmt.Sprintf("pipeline %s must not call a tool that is running it", caller)
	case caller == ce.Tool:
		return msg + fmt.Sprintf("%s %s called itself back through the gateway, which would never end", what, caller)
	}
	return msg + fmt.Sprintf("%s %s called %s back through the gateway while %s runs, which would never end", what, caller, ce.Tool, ce.Tool)
}

// toolKind names what serves the catalog tool name, for messages.
func (g *Gateway) toolKind(name string) string {
	it, ok := g.store.Load().Tool(name)
	if !ok {
		return "tool"
	}
	if s := g.routes.Load().sources[it.Source]; s != nil {
		switch s.kind {
		case "pipelines":
			return "pipeline"
		case "script", "wasm":
			return s.kind + " tool"
		case "mcp":
			return "tool"
		}
	}
	return "tool"
}
