// Command upstream is the benchmark's MCP server: N tools (echo among
// them) over stdio or streamable HTTP, built on mcp-go's server package.
//
//	upstream -tools 51 -transport stdio
//	upstream -tools 51 -transport http -addr 127.0.0.1:0   # prints the URL
package main

import (
	"fmt"
	"os"

	"github.com/skillgate/skillgate/bench/internal/fixture"
)

func main() {
	if err := fixture.Main(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
}
