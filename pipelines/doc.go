// Package pipelines turns YAML pipelines into tools: steps that call other
// tools, with expr-lang expressions (${{ }}) binding each step's arguments
// to the pipeline's inputs and to earlier steps' outputs.
//
// A Loader reads and compiles pipelines, checking every expression, tool
// name and reference before anything runs. A Runner runs a compiled
// Pipeline through a Caller the gateway provides, scheduling independent
// steps in parallel, and keeps a record of recent runs. See
// docs/PIPELINES.md for the format.
package pipelines
