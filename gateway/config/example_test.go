package config_test

import (
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/gateway/config"
)

func ExampleParse() {
	const file = `
servers:
  everything: {command: npx, args: ["-y", "@modelcontextprotocol/server-everything"]}
  remote:
    url: http://127.0.0.1:9000/mcp
    headers: {Authorization: "Bearer ${TOKEN}"}
`
	env := map[string]string{"TOKEN": "s3cret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	cfg, err := config.Parse(strings.NewReader(file), "skillgate.yaml", lookup)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range cfg.ServerOrder {
		s := cfg.Servers[name]
		fmt.Println(name, s.Kind(), s.Pos)
	}
	fmt.Println(cfg.Servers["remote"].Headers["Authorization"])
	fmt.Println(cfg.Listen.HTTP, cfg.Limits.RequestTimeout)

	_, err = config.Parse(strings.NewReader("servers:\n  x: {command: npx, timeout: 10}\n"), "bad.yaml", nil)
	fmt.Println(err)
	// Output:
	// everything stdio skillgate.yaml:3:3
	// remote http skillgate.yaml:4:3
	// Bearer s3cret
	// 127.0.0.1:8811 1m0s
	// bad.yaml:2:30: servers.x.timeout: "10" has no unit; write it as 10s or 10ms
}
