package wasm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// exampleSpec copies an example tool folder of the repository with the
// module TestMain built from its source, reads its tool.yaml as the gateway
// does, and returns the Spec the gateway would send.
func exampleSpec(t *testing.T, name string) json.RawMessage {
	t.Helper()
	src := filepath.Join("..", "..", "examples", "tools", name)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".wasm") {
			copyFile(t, filepath.Join(src, e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	// The entry does not exist yet, so read tool.yaml without Load's checks.
	f, err := os.Open(filepath.Join(dir, toolspec.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tool, err := toolspec.Parse(f, filepath.Join(src, toolspec.FileName))
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, guest(t, name), filepath.Join(dir, tool.Entry))
	if tool, err = toolspec.Load(dir); err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(toolspec.Spec{Dir: dir, Tool: *tool})
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestExamples(t *testing.T) {
	c, _ := startExec(t)

	t.Run("wasm-wordcount", func(t *testing.T) {
		defs := load(t, c, "wc", exampleSpec(t, "wasm-wordcount"))
		if !strings.Contains(string(defs.Tools[0]), `"name":"wasm_word_count"`) || !strings.Contains(string(defs.Tools[0]), `"outputSchema"`) {
			t.Fatalf("definition = %s", defs.Tools[0])
		}
		rec := &sdktest.Recorder{}
		text := strings.Repeat("the cat and the hat\n", 1500)
		raw, err := c.Call(t.Context(), toolCall("wc", "wasm_word_count", `{"text":`+quote(text)+`,"top":2}`), rec)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			StructuredContent struct {
				Words, Lines, Characters int
				Top                      []struct {
					Word  string
					Count int
				}
			}
			IsError bool
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		sc := r.StructuredContent
		if r.IsError || sc.Words != 7500 || sc.Lines != 1500 || sc.Characters != len(text) || len(sc.Top) != 2 || sc.Top[0].Word != "the" || sc.Top[0].Count != 3000 {
			t.Fatalf("result = %s", raw)
		}
		if len(rec.Progresses) != 1 || rec.Progresses[0].Progress != 1000 {
			t.Errorf("progress = %+v", rec.Progresses)
		}
		checkLogContains(t, rec, "counted 7500 words in 1500 lines")
	})

	t.Run("wasm-slugify", func(t *testing.T) {
		defs := load(t, c, "slug", exampleSpec(t, "wasm-slugify"))
		if !strings.Contains(string(defs.Tools[0]), `"name":"wasm_slugify"`) {
			t.Fatalf("definition = %s", defs.Tools[0])
		}
		for args, want := range map[string]string{
			`{"text":"Hello, World!"}`:                          `"slug":"hello-world"`,
			`{"text":"  Ünïcode Straße 2026 ","separator":"_"}`: `"slug":"ünïcode_straße_2026"`,
		} {
			raw, err := c.Call(t.Context(), toolCall("slug", "wasm_slugify", args), &sdktest.Recorder{})
			if err != nil || !strings.Contains(string(raw), want) || strings.Contains(string(raw), "isError") {
				t.Errorf("slugify %s = %s, %v", args, raw, err)
			}
		}
		raw, err := c.Call(t.Context(), toolCall("slug", "wasm_slugify", `{"text":" "}`), &sdktest.Recorder{})
		if err != nil || !strings.Contains(string(raw), `"isError":true`) || !strings.Contains(string(raw), "text is empty") {
			t.Errorf("slugify of nothing = %s, %v", raw, err)
		}
	})
}

func checkLogContains(t *testing.T, rec *sdktest.Recorder, line string) {
	t.Helper()
	for _, n := range rec.Notifications {
		if n.Method == "notifications/message" && strings.Contains(string(n.Params), line) {
			return
		}
	}
	t.Errorf("no log message %q in %+v", line, rec.Notifications)
}
