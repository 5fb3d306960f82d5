package pipelines

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	suggestpkg "github.com/skillgate/skillgate/internal/suggest"

	"gopkg.in/yaml.v3"
)

// closest is the known name nearest to name, when it is near enough to
// be a typo: at most two edits, and no more than half the longer name
// ("frist" is "first", but "zz" is not "a").
func closest(name string, known []string) (string, bool) {
	near, ok := suggestpkg.Closest(name, known)
	if !ok {
		return "", false
	}
	d := suggestpkg.Distance(strings.ToLower(name), strings.ToLower(near))
	return near, 2*d <= max(len(name), len(near))
}

// didYouMean is `did you mean "x"?` for a near miss, else `<what> are a, b`.
func didYouMean(name string, known []string, what string) string {
	if near, ok := closest(name, known); ok {
		return fmt.Sprintf("did you mean %q?", near)
	}
	if len(known) == 0 {
		return "there are none"
	}
	return what + " are " + strings.Join(known, ", ")
}

// suggest names the closest known key, or lists them all.
func suggest(key string, known []string) string { return didYouMean(key, known, "known keys") }

// serviceHint says what to do about a requires naming no service.
func serviceHint(name string, known []string) string {
	if near, ok := closest(name, known); ok {
		return fmt.Sprintf("did you mean %q?", near)
	}
	if len(known) == 0 {
		return "the config declares no services; define it under services: or remove it"
	}
	return "the services are " + strings.Join(known, ", ") + "; define it under services: or remove it"
}

func suggestStep(id string, ids []string) string { return didYouMean(id, ids, "the steps") }

// toolHint says what to do about an unknown tool: the nearest known name,
// or the known tool whose name ends in __name, or where to look.
func toolHint(name string, known []string) string {
	if near, ok := closest(name, known); ok {
		return fmt.Sprintf("did you mean %q?", near)
	}
	var ends []string
	for _, k := range known {
		if strings.HasSuffix(k, "__"+name) {
			ends = append(ends, k)
		}
	}
	if len(ends) > 0 && len(ends) <= 3 {
		return "did you mean " + quoteList(ends) + "? a step names a tool as the gateway serves it"
	}
	return "`skillgate tools list` shows the names of the tools the gateway serves"
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// GitHub Actions keys that pipelines spell differently or do not have, by
// where they appear, with what to write instead.
var (
	ghaPipelineKeys = map[string]string{
		"on":          "is GitHub Actions' trigger; a pipeline runs when its tool is called, so remove it",
		"env":         "a pipeline has no env block; list the variables expressions may read in the gateway config's pipelines.env, and read them as env.NAME",
		"jobs":        "a pipeline is one job: write its steps under steps:",
		"runs-on":     "a pipeline runs inside the gateway, not on a runner; remove it",
		"run-name":    "the tool's description is description:",
		"permissions": "has no meaning here; remove it",
		"defaults":    "has no meaning here; remove it",
	}
	ghaStepKeys = map[string]string{
		"uses":              "a step calls an MCP tool: write tool: <server>__<tool> in place of uses:",
		"run":               "a step calls a tool, it does not run shell commands; write tool: <server>__<tool> (a script can be served as a tool, see docs/SCRIPTS.md)",
		"shell":             "a step calls a tool, it does not run shell commands; remove it",
		"working-directory": "a step calls a tool, it does not run shell commands; remove it",
		"name":              "a step has no name: its id names it; keep a longer label in a YAML comment or an x- key such as x-name:",
		"continue-on-error": "write on_error: continue",
		"strategy":          "write for_each: with the list (one ${{ }} or a YAML list) in place of strategy.matrix; with: reads the current one as item (and its position as index) in place of matrix.<key>",
		"env":               "a step has no env block; pass values in with:, and read the variables the gateway allows as env.NAME",
		"outputs":           "a step's outputs are its tool's result, read as steps.<id>.outputs; name the pipeline's outputs in its own outputs:",
	}
)

// ghaKeyHint is what to write in place of GitHub Actions key k (with
// value v) at a pipeline's top (step false) or in a step, or "".
func ghaKeyHint(k string, v *yaml.Node, step bool) string {
	if !step {
		return ghaPipelineKeys[k]
	}
	if k == "timeout-minutes" {
		if v != nil && v.Kind == yaml.ScalarNode {
			if _, err := strconv.ParseFloat(v.Value, 64); err == nil {
				return "write timeout: " + v.Value + "m (a duration such as 30s or 5m)"
			}
		}
		return "write timeout: with a duration such as 30s or 5m"
	}
	return ghaStepKeys[k]
}

// unknownKey is the message for unknown key k of a pipeline (step false)
// or a step.
func unknownKey(k string, v *yaml.Node, step bool, known []string) string {
	if h := ghaKeyHint(k, v, step); h != "" {
		return "unknown key: " + h
	}
	return "unknown key; " + suggest(k, known)
}

// ghaNames are GitHub Actions expression names that do not exist here.
var ghaNames = map[string]string{
	"success":   "GitHub Actions' status functions do not exist here; a step runs once the steps it reads have settled, and its if can test steps.<id>.status (succeeded, failed, skipped, recovered)",
	"failure":   "GitHub Actions' status functions do not exist here; test steps.<id>.status == \"failed\", with on_error: continue on that step",
	"always":    "GitHub Actions' status functions do not exist here; a step whose dependencies failed with on_error: continue still runs",
	"cancelled": "GitHub Actions' status functions do not exist here; a canceled run stops every step",
	"format":    "there is no format(); write text around the ${{ }} (\"${{ a }} and ${{ b }}\") or join strings with +",
	"matrix":    "there is no matrix; in a step with for_each, item is the current item and index its position",
	"github":    "there is no github context: a pipeline runs inside the gateway; pass what it needs as inputs",
	"runner":    "there is no runner context: a pipeline runs inside the gateway",
	"job":       "there is no job context: a pipeline is one job",
	"jobs":      "there is no jobs context: a pipeline is one job; read steps.<id>",
	"needs":     "there is no needs context; read steps.<id>.outputs (the step then waits for it)",
	"strategy":  "there is no strategy context; in a step with for_each, index is the item's position",
	"vars":      "there is no vars context; allow an environment variable in the gateway config's pipelines.env and read env.NAME",
	"secrets":   "there is no secrets context; allow an environment variable in the gateway config's pipelines.env and read env.NAME",
	"hashFiles": "a pipeline has no workspace files to hash",
	"toJson":    "the function is toJSON (indented) or json (compact)",
	"fromJson":  "the function is fromJSON",
}

// ghaHint adds to the checker's message about an unknown name, a GitHub
// Actions spelling, what to write instead; "" when it is none.
func ghaHint(msg string) string {
	if name, ok := strings.CutPrefix(msg, "unknown name "); ok {
		if h := ghaNames[name]; h != "" {
			return msg + "; " + h
		}
	}
	if field, ok := strings.CutPrefix(msg, "unknown field "); ok && slices.Contains([]string{"outcome", "conclusion"}, field) {
		return msg + "; a step's result is steps.<id>.status (succeeded, failed, skipped, recovered)"
	}
	for _, op := range []string{"contains", "startsWith", "endsWith"} {
		if strings.HasPrefix(msg, `unexpected token Operator("`+op+`")`) {
			return msg + "; " + op + " is an operator here: write a " + op + " b (and x in list for a list)"
		}
	}
	return ""
}
