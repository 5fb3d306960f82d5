package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The three validators (validate, pipeline validate, skills validate)
// print one JSON envelope (ok, errors, warnings, problems, and their own
// members) with problems of one shape, on stdout and nothing on stderr;
// without --json, their text goes to stderr and stdout stays empty.
func TestValidatorsShareOneJSONShape(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"bad.yaml":             "servers:\n  a:\n    command: echo\n    timout: 3s\n",
		"p/bad.yaml":           "steps:\n  - {id: a, tool: admin__servers, with: {x: \"${{ inputs.x + }}\"}}\n",
		"skillgate.yaml":       "servers: {a: {command: echo}}\n",
		"skills/t/SKILL.md":    "---\nname: t\n---\n",
		"skills/w/SKILL.md":    "---\nname: w\ndescription: Weekly.\nrequires: {servers: [nosuchserver]}\n---\n",
		"skills/ok/SKILL.md":   "---\nname: ok\ndescription: Fine.\n---\n",
		"skills/ok/scripts/.k": "",
	})
	cfg := filepath.Join(dir, "skillgate.yaml")
	problemKeys := []string{"column", "field", "file", "line", "message", "severity", "source"}
	for _, tc := range []struct {
		name   string
		args   []string
		extra  string // the command's own member
		source string
	}{
		{"validate", []string{"validate", filepath.Join(dir, "bad.yaml")}, "plugins", "config"},
		{"pipeline validate", []string{"pipeline", "validate", "-c", cfg, "--no-tools", filepath.Join(dir, "p", "bad.yaml")}, "pipelines", "pipeline"},
		{"skills validate", []string{"skills", "validate", "-c", cfg, "--dir", filepath.Join(dir, "skills")}, "skills", "skill"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := runCLI(t, append(tc.args, "--json")...)
			var code exitError
			if !errors.As(err, &code) || code != 1 || stderr != "" {
				t.Errorf("--json: %v, stderr %q; want exit 1 and nothing on stderr", err, stderr)
			}
			var env map[string]json.RawMessage
			if err := json.Unmarshal([]byte(out), &env); err != nil {
				t.Fatalf("--json output: %v\n%s", err, out)
			}
			want := []string{"errors", "ok", "problems", "warnings"}
			if tc.extra != "" {
				want = append(want, tc.extra)
			}
			slices.Sort(want)
			got := slices.Sorted(func(yield func(string) bool) {
				for k := range env {
					if !yield(k) {
						return
					}
				}
			})
			if !slices.Equal(got, want) {
				t.Errorf("envelope members %v, want %v\n%s", got, want, out)
			}
			var head struct {
				OK       bool             `json:"ok"`
				Errors   int              `json:"errors"`
				Warnings int              `json:"warnings"`
				Problems []map[string]any `json:"problems"`
			}
			if err := json.Unmarshal([]byte(out), &head); err != nil || head.OK || head.Errors == 0 || len(head.Problems) < head.Errors {
				t.Fatalf("envelope: %v %+v\n%s", err, head, out)
			}
			for _, p := range head.Problems {
				for k := range p {
					if !slices.Contains(problemKeys, k) {
						t.Errorf("problem member %q is not one of %v: %v", k, problemKeys, p)
					}
				}
				if p["message"] == nil || p["source"] != tc.source || (p["severity"] != "error" && p["severity"] != "warning") {
					t.Errorf("problem %v: want message, source %q and severity error or warning", p, tc.source)
				}
			}
			out, stderr, _ = runCLI(t, tc.args...)
			if out != "" || !strings.Contains(stderr, filepath.Base(dir)) {
				t.Errorf("without --json: stdout %q (want none), stderr %q", out, stderr)
			}
		})
	}
}
