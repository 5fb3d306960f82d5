package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// ServeStubMCP answers the JSON-RPC lines read from in on out as a minimal
// stdio MCP server named name, with one tool, "noop": initialize (echoing
// the protocol version asked for), tools/list and ping; any other request
// gets "method not found" and notifications are ignored. It returns when
// in ends. Tests that re-execute their binary as an upstream use it, and
// choose what happens around it (helpers started first, signals ignored,
// running on after stdin closed).
func ServeStubMCP(name string, in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		reply := `"error":{"code":-32601,"message":"method not found"}`
		switch m.Method {
		case "initialize":
			reply = fmt.Sprintf(`"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":%q,"version":"1"}}`,
				m.Params.ProtocolVersion, name)
		case "tools/list":
			reply = `"result":{"tools":[{"name":"noop","inputSchema":{"type":"object"}}]}`
		case "ping":
			reply = `"result":{}`
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,%s}`+"\n", m.ID, reply)
	}
}
