package yamldoc_test

import (
	"fmt"

	"github.com/skillgate/skillgate/internal/yamldoc"

	"gopkg.in/yaml.v3"
)

func ExampleSyntax() {
	data := []byte("servers:\n  a:\n    command: echo\n   args: [x]\n")
	var doc yaml.Node
	err := yaml.Unmarshal(data, &doc)
	fmt.Println(err)
	p := yamldoc.Syntax(err, data)
	fmt.Printf("f.yaml:%d:%d: %s\n", p.Line, p.Col, p.Msg)
	// Output:
	// yaml: line 1: did not find expected key
	// f.yaml:4:4: did not find expected key; this line does not line up with the keys above it: indent it like them, or further if it belongs to the value above
}

func ExampleAliases() {
	var doc yaml.Node
	_ = yaml.Unmarshal([]byte("base: &b {cmd: x}\nlist: &l [a, *l]\n"), &doc)
	for _, p := range yamldoc.Aliases(&doc) {
		fmt.Printf("f.yaml:%d:%d: %s: %s\n", p.Line, p.Col, p.Field, p.Msg)
	}
	// Output:
	// f.yaml:2:14: list[1]: alias *l refers to itself
}
