// Command faultserver is a stdio MCP server that misbehaves on purpose, for
// the mcp executor's fault tests. JSON-RPC is written by hand so that every
// byte on the wire is under the test's control.
//
// Start-up faults are chosen by flags; faults during a call by the tool
// called (see tools below).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	exitAtStart  = flag.Bool("exit-at-start", false, "write to stderr and exit 3 before reading anything")
	exitIfExists = flag.String("exit-if-exists", "", "like -exit-at-start, when this file exists")
	banner       = flag.Bool("banner", false, "print banner lines on stdout before anything else")
	pages        = flag.Int("pages", 1, "split tools/list into this many pages")
	discoverAny  = flag.Bool("answer-unknown-with-empty", false, "answer unknown methods (server/discover too) with {}")
	ignoreEOF    = flag.Bool("ignore-eof", false, "keep running after stdin closes")
	ignoreTerm   = flag.Bool("ignore-term", false, "ignore SIGTERM")
	pidFile      = flag.String("pid-file", "", "append this process's pid to the file")
	extras       = flag.Bool("extras", false, "also list the tool later and the resource template fault://fail/{code}, whose reads and subscriptions fail with that code")
	echoEnv      = flag.String("echo-env", "", "print these variables (NAME,NAME) on stderr, on stdout as a line that is not JSON-RPC, and the first one in a stderr line over 4 KiB, cut 10 bytes into the value")
)

var (
	outMu sync.Mutex
	out   = bufio.NewWriterSize(os.Stdout, 1<<20)

	mu        sync.Mutex
	waiting   = map[string]chan message{}
	grown     []string
	cancelled []json.RawMessage
	nextReq   int
)

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func main() {
	flag.Parse()
	if *pidFile != "" {
		f, err := os.OpenFile(*pidFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	if *echoEnv != "" {
		printEnv(strings.Split(*echoEnv, ","))
	}
	if *exitAtStart {
		fatal("fatal: missing configuration FAULT_TOKEN")
	}
	if *exitIfExists != "" {
		if _, err := os.Stat(*exitIfExists); err == nil {
			fatal("fatal: marker " + *exitIfExists + " exists")
		}
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintln(os.Stderr, "faultserver starting, env FAULT_ENV="+os.Getenv("FAULT_ENV"))
	if *banner {
		raw("Welcome to faultserver v0 (this line is not JSON)")
		raw(`{"hello":"a JSON object that is not JSON-RPC"}`)
		raw("")
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var m message
			if json.Unmarshal(line, &m) != nil {
				continue
			}
			dispatch(m)
		}
		if err != nil {
			break
		}
	}
	fmt.Fprintln(os.Stderr, "faultserver: stdin closed")
	if *ignoreEOF {
		sleepForever()
	}
}

// printEnv writes the values of names where the executor shows what an
// upstream wrote: stderr lines (the first value also where a line over
// the 4 KiB limit is cut, at byte 512) and a stray stdout line.
func printEnv(names []string) {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, " %s=%s", n, os.Getenv(n))
	}
	fmt.Fprintln(os.Stderr, "faultserver env:"+b.String())
	fmt.Fprintln(os.Stderr, strings.Repeat("p", 502)+os.Getenv(names[0])+strings.Repeat("q", 5000))
	raw("faultserver env on stdout:" + b.String())
}

// sleepForever blocks without tripping the runtime's deadlock detector.
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(3)
}

func dispatch(m message) {
	switch {
	case m.Method == "" && m.ID != nil: // a response to one of our requests
		mu.Lock()
		ch := waiting[string(m.ID)]
		mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case m.ID == nil: // a notification
		if m.Method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(m.Params, &p)
			mu.Lock()
			cancelled = append(cancelled, p.RequestID)
			mu.Unlock()
		}
	case m.Method == "tools/call" && strings.Contains(string(m.Params), `"stopread"`):
		// Stop reading stdin for good, staying alive: block the read loop.
		fmt.Fprintln(os.Stderr, "faultserver: no longer reading stdin")
		sleepForever()
	default:
		go handle(m)
	}
}

func handle(m message) {
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		reply(m.ID, map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities": map[string]any{
				"tools":     map[string]any{"listChanged": true},
				"resources": map[string]any{"subscribe": true, "listChanged": true},
				"prompts":   map[string]any{},
				"logging":   map[string]any{},
			},
			"serverInfo":   map[string]any{"name": "faultserver", "version": "0"},
			"x-future":     map[string]any{"kept": true},
			"instructions": "misbehaves on purpose",
		})
	case "ping":
		reply(m.ID, map[string]any{})
	case "tools/list":
		listTools(m)
	case "resources/list":
		reply(m.ID, json.RawMessage(`{"resources":[{"uri":"fault://a","name":"a","x-extra":{"n":1.50}}]}`))
	case "resources/templates/list":
		if *extras {
			reply(m.ID, json.RawMessage(`{"resourceTemplates":[{"uriTemplate":"fault://fail/{code}","name":"fail"}]}`))
			return
		}
		reply(m.ID, json.RawMessage(`{"resourceTemplates":[]}`))
	case "prompts/list":
		reply(m.ID, json.RawMessage(`{"prompts":[{"name":"p","x-extra":true}]}`))
	case "prompts/get":
		// With a "code" argument the prompt fails with that JSON-RPC error.
		var p struct {
			Arguments struct {
				Code string `json:"code"`
			} `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if code, err := strconv.Atoi(p.Arguments.Code); err == nil {
			replyError(m.ID, code, "prompt p failed on purpose", json.RawMessage(`{"prompt":"p","n":1.50}`))
			return
		}
		reply(m.ID, json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"P"}}]}`))
	case "resources/subscribe", "resources/unsubscribe", "resources/read":
		// fault://fail/CODE fails with JSON-RPC error CODE.
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if rest, ok := strings.CutPrefix(p.URI, "fault://fail/"); ok {
			if code, err := strconv.Atoi(rest); err == nil {
				replyError(m.ID, code, m.Method+" of "+p.URI+" failed on purpose", json.RawMessage(`{"uri":`+quote(p.URI)+`,"n":1.50}`))
				return
			}
		}
		if m.Method == "resources/read" {
			reply(m.ID, json.RawMessage(`{"contents":[{"uri":"fault://a","text":"A"}]}`))
			return
		}
		reply(m.ID, map[string]any{})
	case "tools/call":
		callTool(m)
	default:
		if *discoverAny {
			reply(m.ID, map[string]any{})
			return
		}
		replyError(m.ID, -32601, "method not found: "+m.Method, nil)
	}
}

var toolNames = []string{"echo", "progress", "crash", "exit", "hang", "stopread", "garbage", "huge",
	"wrongid", "flood", "sample", "grow", "rpcerror", "cancelled", "touch", "spawn", "stderr"}

func listTools(m message) {
	names := append([]string{}, toolNames...)
	if *extras {
		names = append(names, "later")
	}
	names = append(names, grownNames()...)
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(m.Params, &p)
	per := (len(names) + *pages - 1) / *pages
	start := 0
	if p.Cursor != "" {
		start, _ = strconv.Atoi(strings.TrimPrefix(p.Cursor, "c"))
	}
	end := min(start+per, len(names))
	var tools []string
	for _, n := range names[start:end] {
		// Unknown fields and odd number spellings must survive untouched.
		tools = append(tools, fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"},"x-extra":{"big":12345678901234567890,"f":1.0}}`, n))
	}
	res := `{"tools":[` + strings.Join(tools, ",") + `]`
	if end < len(names) {
		res += fmt.Sprintf(`,"nextCursor":"c%d"`, end)
	}
	reply(m.ID, json.RawMessage(res+"}"))
}

func grownNames() []string {
	mu.Lock()
	defer mu.Unlock()
	return append([]string{}, grown...)
}

func callTool(m message) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	num := func(k string, def int) int {
		if v, ok := p.Arguments[k].(float64); ok {
			return int(v)
		}
		return def
	}
	// Every tool takes two arguments that let a test order calls across
	// processes: "mark", a file created as soon as the call arrives, and
	// "after", a file the tool waits for (up to 30 s) before it runs.
	if mark, _ := p.Arguments["mark"].(string); mark != "" {
		_ = os.WriteFile(mark, nil, 0o644)
	}
	if after, _ := p.Arguments["after"].(string); after != "" {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(after); err == nil {
				break
			}
		}
	}
	switch p.Name {
	case "echo":
		text, _ := p.Arguments["text"].(string)
		if isError, _ := p.Arguments["isError"].(bool); isError {
			// A tool that ran and failed: a result, not a JSON-RPC error.
			reply(m.ID, json.RawMessage(`{"content":[{"type":"text","text":`+quote(text)+`}],"isError":true}`))
			return
		}
		reply(m.ID, json.RawMessage(`{"content":[{"type":"text","text":`+quote(text)+`}],"x-result-extra":[1,2.50]}`))
	case "progress":
		steps := num("steps", 3)
		for i := 1; i <= steps; i++ {
			if p.Meta.ProgressToken != nil {
				notify("notifications/progress", map[string]any{
					"progressToken": p.Meta.ProgressToken, "progress": i, "total": steps, "message": fmt.Sprintf("step %d", i)})
			}
		}
		notify("notifications/message", map[string]any{"level": "info", "logger": "fault", "data": "progress done"})
		text(m.ID, "done")
	case "crash":
		fmt.Fprintln(os.Stderr, "faultserver: crashing now (SIGKILL)")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case "exit":
		fmt.Fprintln(os.Stderr, "faultserver: exiting with status 7")
		os.Exit(7)
	case "hang":
		sleepForever()
	case "garbage":
		raw("GARBAGE LINE, not JSON at all")
		raw(`{"jsonrpc":"2.0","id":987654,"result":{"stray":true}}`)
		raw(`{"jsonrpc":"2.0","id":"not-ours","result":{}}`)
		raw(`[1,2,3]`)
		raw(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"among garbage"}}`)
		text(m.ID, "survived garbage")
	case "huge":
		n := num("bytes", 5<<20)
		reply(m.ID, json.RawMessage(`{"content":[{"type":"text","text":"`+strings.Repeat("x", n)+`"}]}`))
	case "wrongid":
		raw(`{"jsonrpc":"2.0","id":` + string(m.ID) + `000,"result":{"wrong":true}}`)
		raw(`{"jsonrpc":"2.0","id":"` + string(m.ID) + `","result":{"wrong":true}}`)
		text(m.ID, "right id")
	case "flood":
		n := num("n", 10000)
		for i := range n {
			notify("notifications/message", map[string]any{"level": "debug", "data": i})
			if i%10 == 0 {
				notify("notifications/progress", map[string]any{"progressToken": "not-a-token", "progress": i})
			}
		}
		text(m.ID, fmt.Sprintf("flooded %d", n))
	case "sample":
		res := request("sampling/createMessage", map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}},
			"maxTokens": 10, "x-request-extra": json.RawMessage(`12345678901234567890`),
		})
		text(m.ID, string(res))
	case "grow":
		mu.Lock()
		grown = append(grown, fmt.Sprintf("grown-%d", len(grown)+1))
		mu.Unlock()
		notify("notifications/tools/list_changed", nil)
		text(m.ID, "grew")
	case "rpcerror":
		// code, message and data (JSON text) arguments choose the error.
		code, msg, data := num("code", -32042), "custom failure", json.RawMessage(`{"why":[1,2.50,"x"]}`)
		if s, ok := p.Arguments["message"].(string); ok {
			msg = s
		}
		if s, ok := p.Arguments["data"].(string); ok {
			data = json.RawMessage(s)
		}
		if expand, _ := p.Arguments["expand"].(bool); expand {
			// $NAME in message and data: the server echoes its environment.
			msg, data = os.ExpandEnv(msg), json.RawMessage(os.ExpandEnv(string(data)))
		}
		replyError(m.ID, code, msg, data)
	case "later":
		// Answers at once; then, once the file "then" exists, sends the
		// request "method" (sampling/createMessage by default) outside any
		// call of the client's and writes the answer (its result or error
		// object) to the file "out".
		method, _ := p.Arguments["method"].(string)
		if method == "" {
			method = "sampling/createMessage"
		}
		then, _ := p.Arguments["then"].(string)
		outFile, _ := p.Arguments["out"].(string)
		text(m.ID, "later")
		go func() {
			for deadline := time.Now().Add(30 * time.Second); then != "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(then); err == nil {
					break
				}
			}
			var params any = map[string]any{}
			if method == "sampling/createMessage" {
				params = map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "unsolicited"}}}, "maxTokens": 10}
			} else if method == "elicitation/create" {
				params = map[string]any{"message": "unsolicited", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}
			}
			res, _ := json.Marshal(requestMessage(method, params))
			if outFile != "" {
				_ = os.WriteFile(outFile+".tmp", res, 0o644)
				_ = os.Rename(outFile+".tmp", outFile)
			}
		}()
	case "cancelled":
		mu.Lock()
		b, _ := json.Marshal(cancelled)
		mu.Unlock()
		text(m.ID, string(b))
	case "touch":
		notify("notifications/resources/updated", map[string]any{"uri": "fault://a"})
		text(m.ID, "touched")
	case "spawn":
		// A child in the server's process group; with "session", a helper
		// in a session of its own that ignores SIGTERM, which no signal to
		// the server's group reaches.
		cmd := exec.Command("sleep", "1000")
		if session, _ := p.Arguments["session"].(bool); session {
			cmd = exec.Command("sh", "-c", `trap "" TERM; exec sleep 1000`)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}
		if err := cmd.Start(); err != nil {
			replyError(m.ID, -32603, err.Error(), nil)
			return
		}
		text(m.ID, strconv.Itoa(cmd.Process.Pid))
	case "stderr":
		fmt.Fprintln(os.Stderr, strings.Repeat("e", num("bytes", 10000)))
		fmt.Fprintln(os.Stderr, "short line after the long one")
		text(m.ID, "wrote stderr")
	default:
		replyError(m.ID, -32602, "unknown tool "+p.Name, nil)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func text(id json.RawMessage, s string) {
	reply(id, json.RawMessage(`{"content":[{"type":"text","text":`+quote(s)+`}]}`))
}

func reply(id json.RawMessage, result any) {
	b, _ := json.Marshal(result)
	raw(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + string(b) + `}`)
}

func replyError(id json.RawMessage, code int, msg string, data json.RawMessage) {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(e)
	raw(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":` + string(b) + `}`)
}

func notify(method string, params any) {
	if params == nil {
		raw(`{"jsonrpc":"2.0","method":` + quote(method) + `}`)
		return
	}
	b, _ := json.Marshal(params)
	raw(`{"jsonrpc":"2.0","method":` + quote(method) + `,"params":` + string(b) + `}`)
}

// request sends a server-to-client request and waits for the answer: its
// result, or its error object.
func request(method string, params any) json.RawMessage {
	m := requestMessage(method, params)
	if m.Error != nil {
		return m.Error
	}
	return m.Result
}

// requestMessage sends a server-to-client request and returns the
// response message; its result is "timeout" after 30 s without one.
func requestMessage(method string, params any) message {
	mu.Lock()
	nextReq++
	id := quote("s" + strconv.Itoa(nextReq))
	ch := make(chan message, 1)
	waiting[id] = ch
	mu.Unlock()
	b, _ := json.Marshal(params)
	raw(`{"jsonrpc":"2.0","id":` + id + `,"method":` + quote(method) + `,"params":` + string(b) + `}`)
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		return message{Result: json.RawMessage(`"timeout"`)}
	}
}

func raw(line string) {
	outMu.Lock()
	defer outMu.Unlock()
	out.WriteString(line)
	out.WriteByte('\n')
	out.Flush()
}
