package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestExecutorsStartOnce: callers that ask for an executor while it starts
// share that one start, and nothing starts once the set is closed.
func TestExecutorsStartOnce(t *testing.T) {
	e := newExecutors("/nonexistent/skillgate", slog.New(slog.NewTextHandler(io.Discard, nil)), nil, 0)
	ctx := context.Background()
	got := make([]sdk.Executor, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ex, info, err := e.get(ctx, "script", true)
			if err != nil || info.Name != "script" {
				t.Errorf("get: %+v, %v", info, err)
			}
			got[i] = ex
		}()
	}
	wg.Wait()
	for i, ex := range got {
		if ex == nil || ex != got[0] {
			t.Fatalf("caller %d got executor %p, caller 0 got %p: want one shared instance", i, ex, got[0])
		}
	}
	if err := e.close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.get(ctx, "wasm", true); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close: %v, want ErrClosed", err)
	}
}
