package toolspec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// compileSchema compiles tool.schema.json.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("tool.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("tool.schema.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("tool.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("tool.schema.json")
	if err != nil {
		t.Fatalf("compile tool.schema.json: %v", err)
	}
	return s
}

// yamlToJSONValue decodes YAML into the value jsonschema validates.
func yamlToJSONValue(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchemaAgreesWithParser checks that every example tool.yaml and every
// valid testdata file passes both tool.schema.json and the Go parser, and
// that the schema also rejects the invalid testdata files it can judge.
func TestSchemaAgreesWithParser(t *testing.T) {
	schema := compileSchema(t)
	valid, _ := filepath.Glob("testdata/valid/*.yaml")
	examples, _ := filepath.Glob("../../examples/tools/*/tool.yaml")
	for _, file := range append(valid, examples...) {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(bytes.NewReader(data), file); err != nil {
				t.Errorf("Go parser: %v", err)
			}
			if tool, err := Parse(bytes.NewReader(data), file); err == nil && tool.Runtime != RuntimeWasm &&
				strings.HasPrefix(file, "../../examples/") {
				// A wasm example's module is built, not committed.
				if _, err := Load(filepath.Dir(file)); err != nil {
					t.Errorf("Load: %v", err)
				}
			}
			if err := schema.Validate(yamlToJSONValue(t, data)); err != nil {
				t.Errorf("tool.schema.json: %v", err)
			}
		})
	}
	for _, name := range []string{"unknown_keys", "wrong_types", "invalid_values", "wasm", "persistent_simple"} {
		file := filepath.Join("testdata", "errors", name+".yaml")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(yamlToJSONValue(t, data)); err == nil {
			t.Errorf("tool.schema.json accepts %s, which the parser rejects", file)
		}
	}
}
