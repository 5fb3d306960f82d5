// Package toolspec reads tool folders: one folder per tool, holding a
// tool.yaml and the files it names. It is shared by the gateway (which finds
// the folders and sends them to an executor), the script executor and the
// wasm executor (which run them).
//
// A tool.yaml is decoded strictly: unknown keys, values of the wrong type and
// invalid combinations are all reported at once, each with file:line:col and
// what to do about it.
//
//	name: word_count
//	description: Count the words of a text.
//	runtime: python
//	entry: main.py
//	input_schema:
//	  type: object
//	  properties: {text: {type: string}}
//	  required: [text]
//
// Load reads a folder and checks that its entry stays inside it:
//
//	tool, err := toolspec.Load("tools/word_count")
//	if err != nil {
//		log.Fatal(err) // tools/word_count/tool.yaml:4:8: runtime: ...
//	}
//	def := tool.Definition() // the MCP Tool object
//
// The gateway hands a loaded folder to an executor as a [Spec], the JSON of
// LoadRequest.Spec for the kinds "script" and "wasm".
package toolspec
