package pipelines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// toolFunc is one fake tool: it gets the decoded arguments and returns a
// CallToolResult.
type toolFunc func(ctx context.Context, args map[string]any) (json.RawMessage, error)

// fakeCaller is a hand-written Caller over a table of fake tools.
type fakeCaller struct {
	mu    sync.Mutex
	tools map[string]toolFunc
	calls map[string]int
}

var _ Caller = (*fakeCaller)(nil)

func newFake(tools map[string]toolFunc) *fakeCaller {
	return &fakeCaller{tools: tools, calls: map[string]int{}}
}

func (f *fakeCaller) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	f.mu.Lock()
	f.calls[name]++
	t := f.tools[name]
	f.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("no tool %s", name)
	}
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, fmt.Errorf("bad arguments %s: %v", args, err)
	}
	return t(ctx, m)
}

func (f *fakeCaller) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

func textResult(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return json.RawMessage(`{"content":[{"type":"text","text":` + string(b) + `}]}`)
}

func structResult(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"structuredContent":` + string(b) + `}`)
}

// echo returns its message as text, as server-everything's echo does.
func echo(_ context.Context, a map[string]any) (json.RawMessage, error) {
	return textResult(fmt.Sprint(a["message"])), nil
}

// sum returns a+b as JSON text.
func sum(_ context.Context, a map[string]any) (json.RawMessage, error) {
	x, _ := a["a"].(float64)
	y, _ := a["b"].(float64)
	return textResult(fmt.Sprint(x + y)), nil
}

// block waits until ctx is done, counting the calls in flight.
func block(active *sync.WaitGroup, started chan<- struct{}) toolFunc {
	return func(ctx context.Context, _ map[string]any) (json.RawMessage, error) {
		active.Add(1)
		defer active.Done()
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
}

func mustLoad(t testing.TB, src string) *Pipeline {
	t.Helper()
	ps, err := (&Loader{}).Parse(strings.NewReader(src), "test.yaml")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(ps) != 1 {
		t.Fatalf("got %d pipelines", len(ps))
	}
	return ps[0]
}

// result decodes a CallToolResult.
type result struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured map[string]any `json:"structuredContent"`
	IsError    bool           `json:"isError"`
}

func decode(t testing.TB, raw json.RawMessage) result {
	t.Helper()
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return r
}

func (r result) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

var errFlaky = errors.New("flaky")
