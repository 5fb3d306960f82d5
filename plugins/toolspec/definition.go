package toolspec

import (
	"encoding/json"
)

// defaultInputSchema is the inputSchema of a tool that declares none.
var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

// Definition returns the tool's MCP Tool object: name, title, description,
// inputSchema (default {"type":"object"}), outputSchema and annotations.
func (t *Tool) Definition() json.RawMessage {
	def := struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description,omitempty"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  *Annotations    `json:"annotations,omitempty"`
	}{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations}
	if len(def.InputSchema) == 0 {
		def.InputSchema = defaultInputSchema
	}
	b, err := json.Marshal(def)
	if err != nil {
		// Schemas came from json.Marshal or were checked by Validate.
		panic("toolspec: marshal definition: " + err.Error())
	}
	return b
}
