package pipelines

import (
	"context"
	"slices"
)

// DefaultMaxDepth is how deep tool calls may nest through pipelines (and
// whatever else uses Enter) when the caller sets no limit.
const DefaultMaxDepth = 8

type chainKey struct{}

// WithCallChain returns a copy of ctx carrying chain, the names of the
// tools being called, outermost first. The gateway uses it (or Enter) on
// every tool-to-tool call, so the guard spans pipelines and scripts alike.
func WithCallChain(ctx context.Context, chain []string) context.Context {
	return context.WithValue(ctx, chainKey{}, slices.Clip(chain))
}

// CallChain returns the call chain ctx carries, outermost first, or nil.
// The slice must not be modified.
func CallChain(ctx context.Context) []string {
	c, _ := ctx.Value(chainKey{}).([]string)
	return c
}

// Enter returns a copy of ctx whose call chain ends with tool. It refuses
// with a *ChainError wrapping ErrRecursion when tool is already on the
// chain, and ErrTooDeep when the chain would grow longer than maxDepth
// (DefaultMaxDepth when maxDepth <= 0).
func Enter(ctx context.Context, tool string, maxDepth int) (context.Context, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	chain := CallChain(ctx)
	if slices.Contains(chain, tool) {
		return ctx, &ChainError{Chain: chain, Tool: tool, Max: maxDepth, Err: ErrRecursion}
	}
	if len(chain)+1 > maxDepth {
		return ctx, &ChainError{Chain: chain, Tool: tool, Max: maxDepth, Err: ErrTooDeep}
	}
	// Clipped, so appends by concurrent callers never share a backing array.
	return WithCallChain(ctx, append(slices.Clip(chain), tool)), nil
}
