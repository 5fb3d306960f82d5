package childproc

import "testing"

func TestHandedOutSince(t *testing.T) {
	for _, c := range []struct {
		pid, first, last int
		want             bool
	}{
		{500, 500, 900, true},  // the child itself
		{700, 500, 900, true},  // a descendant
		{499, 500, 900, false}, // older than the child
		{901, 500, 900, false}, // not handed out yet: a stale entry
		{30000, 500, 900, false},
		{32000, 31000, 200, true}, // wrapped: before the wrap
		{100, 31000, 200, true},   // wrapped: after it
		{5000, 31000, 200, false}, // wrapped: neither
	} {
		if got := handedOutSince(c.pid, c.first, c.last); got != c.want {
			t.Errorf("handedOutSince(%d, %d, %d) = %v, want %v", c.pid, c.first, c.last, got, c.want)
		}
	}
}
