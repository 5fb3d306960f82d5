// Command skillgate is one MCP endpoint in front of many MCP servers and
// executor plugins. See `skillgate --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCmd().ExecuteContext(ctx)
	if err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(int(ee))
		}
		fmt.Fprintln(os.Stderr, "skillgate:", errorText(err))
		os.Exit(1)
	}
}

// errorText is err as the CLI prints it. A JSON-RPC error whose message
// starts with its own code, as the TypeScript SDK's do ("MCP error -32602:
// ..."), shows the code once.
func errorText(err error) string {
	s := err.Error()
	var rpc *sdk.RPCError
	if errors.As(err, &rpc) {
		if msg, ok := strings.CutPrefix(rpc.Message, fmt.Sprintf("MCP error %d: ", rpc.Code)); ok {
			s = strings.Replace(s, rpc.Error(), (&sdk.RPCError{Code: rpc.Code, Message: msg}).Error(), 1)
		}
	}
	return s
}

// exitError ends the process with a status after the command already said why.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
