package gateway

import (
	"testing"

	"github.com/skillgate/skillgate/pipelines"
)

// TestOnlyStarting: pipelines held back only because a step's server is
// still starting are not reported as problems (logged at info); any other
// problem among them is.
func TestOnlyStarting(t *testing.T) {
	starting := &pipelines.Error{Field: "steps[0].tool", Msg: "everything__echo: server everything is starting"}
	failed := &pipelines.Error{Field: "steps[0].tool", Msg: "broken__x: server broken is failed: exit status 3"}
	unknown := &pipelines.Error{Field: "steps[1].tool", Msg: `unknown tool "nope__x"`}
	for _, c := range []struct {
		problems []*pipelines.Error
		want     bool
	}{
		{[]*pipelines.Error{starting}, true},
		{[]*pipelines.Error{starting, starting}, true},
		{[]*pipelines.Error{starting, failed}, false},
		{[]*pipelines.Error{unknown}, false},
	} {
		if got := onlyStarting(c.problems); got != c.want {
			t.Errorf("onlyStarting(%v) = %v, want %v", c.problems, got, c.want)
		}
	}
}
