package pipelines

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden")

// knownTool is the static tool list of the golden tests and examples:
// server-everything's tools as the built-in config names them, and a few
// made-up servers.
var knownTool = regexp.MustCompile(`^(everything__(echo|get-sum|get-env|get-structured-content|get-annotated-message|get-tiny-image|trigger-long-running-operation|get-resource-links|get-resource-reference|gzip-file-as-resource|toggle-simulated-logging|toggle-subscriber-updates)|(weather|notify|x)__[a-z_]+)$`).MatchString

// TestGolden compiles each testdata/golden/*.yaml and compares what comes
// out, the error list or the graph, Mermaid, tool definition and plan,
// with its .golden file. A file's x-plan-args are the plan's arguments.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.yaml")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			l := &Loader{Tools: knownTool, Env: map[string]string{"REGION": "eu"}}
			ps, err := l.Parse(strings.NewReader(string(src)), filepath.Base(file))
			var b strings.Builder
			if err != nil {
				b.WriteString("errors:\n")
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var pe *Error
					if !errors.As(e, &pe) {
						t.Errorf("%v is not an *Error", e)
					}
					b.WriteString(e.Error() + "\n")
				}
			}
			var meta struct {
				Args any `yaml:"x-plan-args"`
			}
			_ = yaml.Unmarshal(src, &meta)
			args, _ := json.Marshal(meta.Args)
			for _, p := range ps {
				b.WriteString("\n== graph\n" + p.Graph())
				b.WriteString("\n== mermaid\n" + p.Mermaid())
				var def any
				_ = json.Unmarshal(p.Tool(), &def)
				tool, _ := json.MarshalIndent(def, "", "  ")
				b.WriteString("\n== tool\n" + string(tool) + "\n")
				plan, err := p.Plan(args)
				if err != nil {
					plan = "error: " + err.Error() + "\n"
				}
				b.WriteString("\n== plan " + string(args) + "\n" + plan)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v; run go test -run TestGolden -update", err)
			}
			if b.String() != string(want) {
				t.Errorf("%s differs; got:\n%s", golden, b.String())
			}
		})
	}
}
