package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// pipeline run and call find a pipeline compiled against the catalog the
// start left: a server that becomes ready while the pipelines compile
// (here, many of them, so the compile outlasts the server's start) must
// not leave its pipeline held back with "unknown tool" (or compiled but not
// yet in the catalog) when run picks it.
func TestPipelineRunAfterSlowCompile(t *testing.T) {
	bin := buildSkillgate(t)
	argv := testenv.NodeServer(t, "server-everything")
	dir := t.TempDir()
	files := map[string]string{
		"skillgate.yaml": `servers:
  everything:
    command: ` + argv[0] + `
    args: [` + strings.Join(argv[1:], ", ") + `]
pipelines: {dirs: [./p]}
`,
		// Sorted last: its step's tool is looked up after the fillers.
		"p/zz_report.yaml": `name: report
description: Echo a title.
inputs: {type: object, properties: {title: {type: string}}, required: [title]}
steps:
  - {id: say, tool: everything__echo, with: {message: "${{ inputs.title }}"}}
outputs: {said: "${{ steps.say.outputs }}"}
`,
	}
	// The fillers call only the gateway's own tools, which are there from
	// the start: none of them waits for the server.
	var steps strings.Builder
	for j := range 10 {
		fmt.Fprintf(&steps, "  - {id: s%d, tool: admin__stats, with: {x: \"${{ upper(inputs.t) }} ${{ len(inputs.t) }}\"}}\n", j)
	}
	for i := range 600 {
		files[fmt.Sprintf("p/filler%03d.yaml", i)] = fmt.Sprintf("name: filler%d\ndescription: Filler.\ninputs: {type: object, properties: {t: {type: string}}}\nsteps:\n%s", i, steps.String())
	}
	writeFiles(t, dir, files)
	cfg := filepath.Join(dir, "skillgate.yaml")
	for _, args := range [][]string{
		{"pipeline", "run", "-c", cfg, "report", "--arg", "title=hello"},
		// call waits for the tool until the start is over: the start
		// must not end with the pipeline compiled against a catalog
		// without the server.
		{"call", "-c", cfg, "pipelines__report", "--arg", "title=hello"},
	} {
		out, stderr, code := runBin(t, bin, args...)
		if code != 0 || !strings.Contains(out, "hello") {
			t.Errorf("%s: exit %d, want 0 and the echo of hello\nstdout:\n%s\nstderr:\n%s", args[0], code, out, stderr)
		}
	}
}
