// Command executor-hello is a third-party skillgate executor built against
// the executor SDK alone. It loads sources of kind "hello" and offers two
// tools: greet, which answers with a greeting, and countdown, which counts
// down with progress reports and stops when the call is cancelled.
//
// The gateway starts this binary itself; run by hand, it prints a notice
// that it is a plugin and exits.
package main

import "github.com/skillgate/skillgate/plugins/sdk"

func main() { sdk.Serve(&hello{}) }
