package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// ServeStubMCP answers the JSON-RPC lines read from in on out as a minimal
// stdio MCP server named name, with one tool, "noop": initialize (echoing
// the protocol version asked for), tools/list and ping; any other request
// gets "method not found" and notifications are ignored. It returns when
// in ends. Tests that re-execute their binary as an upstream use it, and
// choose what happens around it (helpers started first, signals ignored,
// running on after stdin closed).
func ServeStubMCP(name string, in io.Reader, out io.Writer) {
	ServeStubMCPCalls(name, in, out, nil)
}

// ServeStubMCPCalls is ServeStubMCP whose tools/call requests go to call
// (nil: "method not found"), with the request's id and send, which writes
// one line to out, safely from any goroutine: call answers the request
// (or not), now or later, and may send requests and notifications of the
// server's own.
func ServeStubMCPCalls(name string, in io.Reader, out io.Writer, call func(id json.RawMessage, send func(line string))) {
	var mu sync.Mutex
	send := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, line)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 || m.Method == "" {
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
		case "tools/call":
			if call != nil {
				call(m.ID, send)
				continue
			}
		}
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, m.ID, reply))
	}
}
