package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// The pipeline commands say what is wrong with the name asked for: a
// pipeline that has problems shows them (before: "no pipeline in the
// config"), a near miss gets a suggestion, an argument the inputs do not
// name is refused with the nearest input, and one step is "1 step".
func TestPipelineCLINames(t *testing.T) {
	cfg, pdir := pipelineCLIConfig(t)
	writeFiles(t, pdir, map[string]string{
		"broken.yaml": "steps: [{id: a, tool: admin__servers, with: {x: \"${{ inputs.x + }}\"}}]\n",
		"one.yaml":    "steps: [{id: a, tool: admin__servers}]\n",
	})
	for _, verb := range []string{"run", "graph"} {
		_, _, err := runCLI(t, "-c", cfg, "pipeline", verb, "broken")
		if err == nil || !strings.HasPrefix(err.Error(), `pipeline "broken" has problems and is not served`) || !strings.Contains(err.Error(), filepath.Join(pdir, "broken.yaml")+":1:") {
			t.Errorf("pipeline %s broken: %v; want its problems", verb, err)
		}
	}
	if _, _, err := runCLI(t, "-c", cfg, "pipeline", "run", "stauts"); err == nil || !strings.Contains(err.Error(), `no pipeline "stauts" in the config; did you mean "status"?`) {
		t.Errorf("pipeline run stauts: %v; want a suggestion", err)
	}
	if _, _, err := runCLI(t, "-c", cfg, "pipeline", "run", "status", "--arg", "lable=x"); err == nil || err.Error() != `pipeline status has no input "lable"; did you mean "label"?` {
		t.Errorf("pipeline run status --arg lable=x: %v; want a refusal naming label", err)
	}
	if _, stderr, _ := runCLI(t, "-c", cfg, "pipeline", "validate", "--all"); !strings.Contains(stderr, "ok (pipelines__one, 1 step)") {
		t.Errorf("validate --all:\n%s\nwant one.yaml ok with 1 step", stderr)
	}
}

// pipeline runs of a run the gateway does not keep fails as the CLI's
// errors do (skillgate: ..., a newline) and points to the CLI.
func TestPipelineRunsUnknownID(t *testing.T) {
	bin := buildSkillgate(t)
	cfg, _ := pipelineCLIConfig(t)
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	if err := os.WriteFile(cfg, []byte("listen: {http: "+addr+"}\npipelines: {dirs: [./pipelines]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testenv.Start(t, exec.Command(bin, "run", "-c", cfg))
	if err := p.WaitTCP(addr, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runBin(t, bin, "pipeline", "runs", "nosuchid", "--url", addr)
	want := fmt.Sprintf("skillgate: no run \"nosuchid\" is kept by the gateway at %s; `skillgate pipeline runs --url %s` lists the ones that are\n", addr, addr)
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and stderr %q", code, stdout, stderr, want)
	}
}

// A pipeline's requires naming a service the config lacks is a problem
// of validate, with file:line and the nearest name, as a server's is.
func TestValidatePipelineRequires(t *testing.T) {
	cfg, pdir := pipelineCLIConfig(t)
	writeFiles(t, pdir, map[string]string{"p_typo.yaml": "requires: [sik]\nsteps: [{id: a, tool: admin__servers}]\n"})
	if err := os.WriteFile(cfg, []byte("pipelines: {dirs: [./pipelines]}\nservices:\n  sick: {image: redis:7}\n  good: {image: redis:7}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(pdir, "p_typo.yaml") + `:1:12: requires[0]: unknown service "sik"; did you mean "sick"?`
	for _, args := range [][]string{{"validate", "-c", cfg}, {"-c", cfg, "pipeline", "validate", "--all", "--no-tools"}} {
		_, stderr, err := runCLI(t, args...)
		if err == nil || !strings.Contains(stderr, want) {
			t.Errorf("%v: err %v, stderr\n%s\nwant %s", args, err, stderr, want)
		}
	}
}
