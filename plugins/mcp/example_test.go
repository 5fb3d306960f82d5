package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/skillgate/skillgate/plugins/mcp"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// An invalid spec is reported with every problem at once.
func Example() {
	e := mcp.New()
	defer e.Close()
	_, err := e.Load(context.Background(), sdk.LoadRequest{
		Source: "files",
		Kind:   mcp.Kind,
		Spec:   json.RawMessage(`{"command": "server", "url": "http://127.0.0.1:9/mcp", "start": "soon"}`),
	})
	fmt.Println(err)
	// Output: source "files": invalid spec: set command or url, not both; start "soon" is not eager or lazy
}
