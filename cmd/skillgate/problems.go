package main

import (
	"github.com/skillgate/skillgate/pipelines"
	"github.com/skillgate/skillgate/skills"
)

// The three validators (validate, pipeline validate, skills validate)
// print one --json envelope, problemEnvelope's, with problems of one
// shape, validateProblem. Without --json each prints its problem lines and
// summary on stderr and nothing on stdout.

// problemEnvelope is a validator's --json output: ok (no errors), the
// counts of errors and warnings, every problem (errors and warnings, told
// apart by severity), and the command's own members (skills, pipelines).
func problemEnvelope(problems []validateProblem, own map[string]any) map[string]any {
	errs, warns := 0, 0
	for _, p := range problems {
		if p.Severity == "error" {
			errs++
		} else {
			warns++
		}
	}
	if problems == nil {
		problems = []validateProblem{}
	}
	env := map[string]any{"ok": errs == 0, "errors": errs, "warnings": warns, "problems": problems}
	for k, v := range own {
		env[k] = v
	}
	return env
}

// pipelineProblemOf is a pipeline's load problem (or warning) as the
// validators print it.
func pipelineProblemOf(p *pipelines.Error) validateProblem {
	sev := "error"
	if p.Warning {
		sev = "warning"
	}
	msg := p.Msg
	if p.Expr != "" {
		msg += " in ${{ " + p.Expr + " }}"
	}
	return validateProblem{File: p.Pos.File, Line: p.Pos.Line, Column: p.Pos.Col, Field: p.Field,
		Message: msg, Severity: sev, Source: "pipeline"}
}

// skillProblemOf is a problem of a skill (source "skill") or of a tool
// folder (source "tool") as the validators print it.
func skillProblemOf(p skills.Problem, source string) validateProblem {
	sev := "error"
	if p.Warning {
		sev = "warning"
	}
	return validateProblem{File: p.Path, Line: p.Line, Column: p.Column, Field: p.Field, Message: p.Msg, Severity: sev, Source: source}
}
