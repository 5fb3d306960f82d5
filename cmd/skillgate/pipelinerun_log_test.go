package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPipelineRunLeavesOutTheLog: `pipeline run` with a config whose
// server fails and whose other pipeline does not compile prints its own
// lines on stderr (the step progress and timings, or an error naming the
// problem), not the gateway's log records of those failures; --log-level
// brings them back.
func TestPipelineRunLeavesOutTheLog(t *testing.T) {
	bin := buildSkillgate(t)
	cfg, pdir := pipelineCLIConfig(t)
	writeFile(t, filepath.Join(pdir, "usebroken.yaml"), "steps:\n  - {id: a, tool: broken__x}\n")
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg, string(body)+"servers:\n  broken:\n    command: sh\n    args: [\"-c\", \"echo the database is locked >&2; exit 3\"]\n")

	out, stderr, code := runBin(t, bin, "pipeline", "run", "status", "-c", cfg)
	if code != 0 || !strings.Contains(out, `"isError": false`) && !strings.Contains(out, `"content"`) {
		t.Fatalf("pipeline run status: exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.Contains(stderr, "msg=") {
		t.Errorf("pipeline run status prints the gateway's log:\n%s", stderr)
	}

	_, stderr, code = runBin(t, bin, "pipeline", "run", "usebroken", "-c", cfg)
	if code != 1 || !strings.Contains(stderr, "broken__x: server broken is failed") || !strings.Contains(stderr, "the database is locked") {
		t.Errorf("pipeline run usebroken: exit %d; want 1 and the problem naming the failed server:\n%s", code, stderr)
	}
	if strings.Contains(stderr, "msg=") {
		t.Errorf("pipeline run usebroken prints the gateway's log next to its error:\n%s", stderr)
	}

	_, stderr, _ = runBin(t, bin, "pipeline", "run", "usebroken", "-c", cfg, "--log-level", "warn")
	for _, want := range []string{`msg="source failed to load" source=broken`, `msg="pipelines with problems are not served"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("pipeline run --log-level warn lacks %s:\n%s", want, stderr)
		}
	}
}
