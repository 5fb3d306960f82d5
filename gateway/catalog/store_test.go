package catalog

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestStoreZeroValue(t *testing.T) {
	var st Store
	s := st.Load()
	if s == nil || s.Version() != 0 || string(s.ToolsJSON()) != "[]" || len(s.Tools()) != 0 {
		t.Fatalf("zero Store serves %+v, want an empty snapshot", s)
	}
	if _, ok := s.Tool("x"); ok {
		t.Error("empty snapshot finds a tool")
	}
	if _, ok := s.MatchTemplate("x://y"); ok {
		t.Error("empty snapshot matches a template")
	}
	got := st.SetSource(Source{ID: "a", Namespace: "n", Defs: defs(tools("x"))})
	if got != st.Load() || got.Version() != 1 {
		t.Errorf("SetSource returned version %d, Load %p vs %p", got.Version(), st.Load(), got)
	}
	if _, ok := st.Load().Tool("n__x"); !ok {
		t.Error("default options not applied")
	}
}

func TestStoreWriters(t *testing.T) {
	st := NewStore(Options{Separator: "-", Reserved: []string{"find"}})
	steps := []struct {
		name string
		do   func() *Snapshot
		want map[string]string
	}{
		{"set a", func() *Snapshot { return st.SetSource(Source{ID: "a", Defs: defs(tools("x", "find"))}) },
			map[string]string{"x": "a/x", "a-find": "a/find"}},
		{"set b", func() *Snapshot { return st.SetSource(Source{ID: "b", Order: 1, Defs: defs(tools("x"))}) },
			map[string]string{"x": "a/x", "a-find": "a/find", "b-x": "b/x"}},
		{"replace a", func() *Snapshot { return st.SetSource(Source{ID: "a", Defs: defs(tools("y"))}) },
			map[string]string{"x": "b/x", "y": "a/y"}},
		{"remove a", func() *Snapshot { return st.RemoveSource("a") },
			map[string]string{"x": "b/x"}},
		{"remove missing", func() *Snapshot { return st.RemoveSource("nope") },
			map[string]string{"x": "b/x"}},
		{"reload", func() *Snapshot {
			return st.Reload(Options{}, []Source{{ID: "c", Namespace: "c", Defs: defs(tools("z"))}})
		}, map[string]string{"c__z": "c/z"}},
		{"swap", func() *Snapshot {
			return st.Swap(Build([]Source{{ID: "s", Defs: defs(tools("w"))}}, Options{}))
		}, map[string]string{"w": "s/w"}},
		{"rebuild after swap uses the store's sources", func() *Snapshot { return st.RemoveSource("nope") },
			map[string]string{"c__z": "c/z"}},
	}
	for i, step := range steps {
		snap := step.do()
		if snap != st.Load() {
			t.Errorf("%s: returned snapshot is not the current one", step.name)
		}
		if snap.Version() != uint64(i+1) {
			t.Errorf("%s: version %d, want %d", step.name, snap.Version(), i+1)
		}
		if got := exposed(snap); fmt.Sprint(got) != fmt.Sprint(step.want) {
			t.Errorf("%s: tools %v, want %v", step.name, got, step.want)
		}
	}

	built := Build(nil, Options{})
	if st.Swap(built) == built || built.Version() != 0 {
		t.Error("Swap modified the snapshot it was given")
	}
}

func TestSubscribe(t *testing.T) {
	st := NewStore(Options{})
	ch, cancel := st.Subscribe()
	ch2, cancel2 := st.Subscribe()
	defer cancel2()
	for i := 0; i < 3; i++ {
		st.SetSource(Source{ID: fmt.Sprint(i)})
	}
	select {
	case s := <-ch:
		if s.Version() != 3 {
			t.Errorf("got version %d, want the latest, 3", s.Version())
		}
	default:
		t.Fatal("nothing delivered")
	}
	select {
	case s := <-ch:
		t.Fatalf("extra delivery of version %d", s.Version())
	default:
	}
	cancel()
	cancel() // idempotent
	if _, ok := <-ch; ok {
		t.Error("channel not closed by cancel")
	}
	st.SetSource(Source{ID: "after"}) // must not send on the closed channel
	if s := <-ch2; s.Version() != 4 {
		t.Errorf("second subscriber got version %d, want 4", s.Version())
	}
}

// TestConcurrentReaders runs readers against a writer that keeps swapping;
// run it with -race. Each snapshot must be internally consistent and
// versions never go back.
func TestConcurrentReaders(t *testing.T) {
	st := NewStore(Options{})
	st.SetSource(Source{ID: "base", Defs: defs(tools("always"))})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)

	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := st.Load()
				if s.Version() < last {
					errs <- fmt.Errorf("version went back from %d to %d", last, s.Version())
					return
				}
				last = s.Version()
				if _, ok := s.Tool("always"); !ok {
					errs <- fmt.Errorf("version %d lost a tool", last)
					return
				}
				for _, it := range s.Tools() {
					if got, ok := s.Tool(it.Name); !ok || got != it {
						errs <- fmt.Errorf("version %d: listed tool %q not found", last, it.Name)
						return
					}
				}
				_ = s.ToolsJSON()
				s.MatchTemplate("t://x")
			}
		}()
	}
	sub, cancel := st.Subscribe()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range sub {
		}
	}()

	deadline := time.Now().Add(200 * time.Millisecond)
	for i := 0; time.Now().Before(deadline) || i < 50; i++ {
		id := fmt.Sprint("s", i%5)
		switch i % 3 {
		case 0:
			st.SetSource(Source{ID: id, Order: i, Defs: defs(tools("x", "always", fmt.Sprint("t", i)))})
		case 1:
			st.RemoveSource(id)
		case 2:
			st.Swap(Build([]Source{{ID: "base", Defs: defs(tools("always", "swapped"))}}, Options{}))
		}
	}
	close(stop)
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
