package gateway

import (
	"maps"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// routeTable is what a call needs to reach its source. It is immutable:
// a change to the sources or the config publishes a new one, so the hot
// path takes no lock.
type routeTable struct {
	sources map[string]*source
	timeout time.Duration // limits.request_timeout
	max     time.Duration // limits.max_request_timeout
}

// putSource adds or replaces s (g.mu held).
func (g *Gateway) putSource(s *source) {
	g.sources[s.id] = s
	g.publishRoutes()
}

// dropSource removes a source (g.mu held).
func (g *Gateway) dropSource(id string) {
	delete(g.sources, id)
	g.publishRoutes()
}

// publishRoutes publishes the route table of g.sources and g.cfg (g.mu
// held). Changes are rare (loads, reloads, folder edits) and the table is
// one map of pointers, so copying it whole is cheap.
func (g *Gateway) publishRoutes() {
	g.routes.Store(&routeTable{sources: maps.Clone(g.sources), timeout: time.Duration(g.cfg.Limits.RequestTimeout),
		max: time.Duration(g.cfg.Limits.MaxRequestTimeout)})
}

// execRef boxes an executor for an atomic pointer: the executors behind
// sources have different concrete types.
type execRef struct{ sdk.Executor }

// executor returns the executor serving s, nil before its first load.
func (s *source) executor() sdk.Executor {
	if r := s.exec.Load(); r != nil {
		return r.Executor
	}
	return nil
}

// setExecutor records the executor serving s.
func (s *source) setExecutor(ex sdk.Executor) {
	s.exec.Store(&execRef{ex})
}
