package pipelines

import (
	"sync"
	"time"

	"github.com/expr-lang/expr/types"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Pipeline is a compiled pipeline: every expression checked and compiled,
// the step graph known. It is immutable and safe for concurrent runs.
type Pipeline struct {
	// Name is the pipeline's own name, as written or taken from its file.
	Name string
	// ToolName is the name the gateway serves it under, such as
	// "pipelines__digest" (see Loader.ToolName).
	ToolName string
	// Description is the tool description.
	Description string
	// Pos is where the pipeline is defined.
	Pos Pos
	// Timeout bounds a whole run; zero means only the caller's context does.
	Timeout time.Duration
	// Concurrency bounds the tool calls of one run in flight at once; zero
	// means the Runner's MaxParallel.
	Concurrency int
	// Steps are the steps in file order. Do not modify them.
	Steps []*Step
	// Requires names services (Docker) that must be healthy before a run;
	// the gateway starts them.
	Requires []string
	// Warnings are what the loader found questionable without holding the
	// pipeline back, each with its position (see Loader.ToolSchema).
	Warnings []*Error

	label      string             // prefix of its problems' fields: its key among inline pipelines, or ""
	inputs     map[string]any     // JSON Schema
	schema     *jsonschema.Schema // inputs compiled; nil when there is none
	inputsType types.Type
	outputs    *tmpl // nil: the outputs of the steps nothing depends on
	eng        *engine
	env        map[string]any
	byID       map[string]*Step
	sinks      []*Step

	depsOnce sync.Once
	depsOf   [][]*Step // by step index: the steps that wait for it
}

// dependents returns, by step index, the steps that wait for each step,
// in file order. Fallback steps wait for nobody here: they run inside the
// step they stand in for.
func (p *Pipeline) dependents() [][]*Step {
	p.depsOnce.Do(func() {
		p.depsOf = make([][]*Step, len(p.Steps))
		for _, s := range p.Steps {
			if s.Fallback {
				continue
			}
			for _, d := range s.deps {
				p.depsOf[d.index] = append(p.depsOf[d.index], s)
			}
		}
	})
	return p.depsOf
}

// Step is one compiled step. Its fields describe it for graphs and
// plans; do not modify them.
type Step struct {
	// ID is the step's id, unique in its pipeline.
	ID string
	// Tool is the tool it calls, by the gateway's name.
	Tool string
	// Pos is where the step is defined.
	Pos Pos
	// Needs are the step ids written in needs.
	Needs []string
	// Deps are every step this one waits for: Needs plus the steps its
	// expressions read, in file order.
	Deps []string
	// If is the source of the if expression, or "".
	If string
	// ForEach is the source of the for_each value, or "".
	ForEach string
	// Concurrency bounds the for_each items in flight (default 4).
	Concurrency int
	// Retry is how failed calls are retried.
	Retry Retry
	// Timeout bounds each attempt of each call; zero means none of its own.
	Timeout time.Duration
	// OnError is "fail", "continue" or the id of a fallback step.
	OnError string
	// Fallback marks a step that runs only as another step's on_error.
	Fallback bool

	index      int
	toolPos    Pos
	hasForEach bool
	deps       []*Step
	cond       *program
	forEach    *tmpl
	itemType   types.Type // of for_each's items, as far as known
	with       *tmpl
	withJSON   []byte // pre-encoded arguments when with has no expression
	fallback   *Step
	// The argument names written in with and where, for checking them
	// against the called tool's input schema; args is nil when with is one
	// expression, whose names are known only when it runs.
	args    []argName
	withPos Pos
}

// argName is an argument name written in a step's with, and where.
type argName struct {
	name string
	pos  Pos
}

// Retry is a step's retry policy: up to Max more attempts, waiting
// Backoff before the first and twice as long before each next one.
type Retry struct {
	Max     int
	Backoff time.Duration
}

// Step statuses, as expressions see them in steps.<id>.status and as runs
// record them.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusSkipped   = "skipped"
	StatusRecovered = "recovered" // failed, and its fallback step succeeded
	StatusCanceled  = "canceled"
)

// Step returns the step with the given id, or nil.
func (p *Pipeline) Step(id string) *Step { return p.byID[id] }
