// Command richserver is a stdio MCP server (protocol 2025-11-25 and older)
// whose definitions and results carry every member the protocol allows —
// and some it does not know yet — for the gateway's pass-through tests.
// JSON-RPC is written by hand: every result below is sent exactly as it is
// spelled here, with its key order, its number spellings and its unknown
// members, so a test can compare what a client sees through the gateway
// with these bytes.
//
// Flags:
//
//	-tag T    is reported by the whoami tool (reload tests tell processes apart by it)
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

var tag = flag.String("tag", "", "reported by the whoami tool")

// The lists. Key order is deliberately unusual ("name" is not first),
// numbers are spelled the way a re-encoder would change them (1.50, 1e3,
// 12345678901234567890), and x-future members stand for fields a later
// protocol revision may add.
const (
	toolsList = `{"tools":[` +
		`{"x-future":{"z":1,"a":[true,null,1.50]},"name":"rich","title":"Rich Tool","description":"Carries every tool member & more <see below>.",` +
		`"icons":[{"src":"https://example.com/rich.png","mimeType":"image/png","sizes":["48x48","96x96"]},{"src":"data:image/svg+xml;base64,PHN2Zy8+","mimeType":"image/svg+xml","sizes":["any"],"theme":"dark"}],` +
		`"inputSchema":{"type":"object","$defs":{"point":{"type":"object","properties":{"y":{"type":"number"},"x":{"type":"number"}},"required":["y","x"]}},` +
		`"properties":{"zeta":{"type":"string","enum":["b","a"]},"alpha":{"$ref":"#/$defs/point"},"mode":{"type":"string","default":"fast"},"big":{"type":"integer","maximum":12345678901234567890}},` +
		`"required":["zeta"],"additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema"},` +
		`"outputSchema":{"type":"object","properties":{"sum":{"type":"number"},"items":{"type":"array","items":{"type":"string"}},"nested":{"type":"object"}},"required":["sum"]},` +
		`"annotations":{"title":"Rich (annotated)","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false,"x-annotation-future":"kept"},` +
		`"execution":{"taskSupport":"optional"},` +
		`"_meta":{"com.example/origin":"fixture","com.example/ui":{"resourceUri":"ui://rich/app","weight":1e3}}},` +
		`{"name":"fail","description":"Returns isError results; arguments.kind picks one.","inputSchema":{"type":"object","properties":{"kind":{"type":"string","enum":["text","structured","empty","meta"]}}}},` +
		`{"name":"future","description":"Returns a content block of a type this protocol revision does not define.","inputSchema":{"type":"object"}},` +
		`{"name":"args","description":"Returns the bytes of the arguments it received.","inputSchema":{"type":"object"}},` +
		`{"name":"params","description":"Returns the bytes of the params of the call it received.","inputSchema":{"type":"object"}},` +
		`{"name":"whoami","description":"Returns the -tag flag and the pid.","inputSchema":{"type":"object"}},` +
		`{"name":"sleep","description":"Answers after arguments.ms milliseconds.","inputSchema":{"type":"object","properties":{"ms":{"type":"integer"}}}}` +
		`]}`

	resourcesList = `{"resources":[` +
		`{"x-future":1,"uri":"rich://docs/readme","name":"readme","title":"Read Me","description":"The readme.","mimeType":"text/markdown","size":1234,` +
		`"icons":[{"src":"https://example.com/doc.png","mimeType":"image/png","sizes":["16x16"]}],` +
		`"annotations":{"audience":["user"],"priority":0.25,"lastModified":"2025-01-02T03:04:05Z"},"_meta":{"com.example/k":"res"}}` +
		`]}`

	templatesList = `{"resourceTemplates":[` +
		`{"uriTemplate":"rich://items/{id}","name":"item","title":"Item","description":"An item by id.","mimeType":"application/json",` +
		`"icons":[{"src":"https://example.com/item.png"}],"annotations":{"priority":0.75},"_meta":{"com.example/k":"tmpl"},"x-future":[1.0]}` +
		`]}`

	promptsList = `{"prompts":[` +
		`{"description":"Write a brief.","name":"brief","title":"Brief",` +
		`"arguments":[{"name":"topic","title":"Topic","description":"What about","required":true},{"name":"tone","description":"How"}],` +
		`"icons":[{"src":"https://example.com/p.png","mimeType":"image/png","sizes":["16x16"]}],"_meta":{"com.example/k":"prompt"},"x-future":{"a":1}}` +
		`]}`
)

// Results of calls, by what was called.
const (
	richResult = `{"content":[` +
		`{"type":"text","text":"sum is 3","annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-02T03:04:05Z"},"_meta":{"com.example/k":"text"}},` +
		`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"audience":["user"]},"_meta":{"com.example/k":"image"}},` +
		`{"type":"audio","data":"UklGRiQAAABXQVZF","mimeType":"audio/wav","_meta":{"com.example/k":"audio"}},` +
		`{"type":"resource_link","uri":"rich://docs/readme","name":"readme","title":"Read Me","description":"a link","mimeType":"text/markdown","size":1234,` +
		`"icons":[{"src":"https://example.com/doc.png"}],"annotations":{"priority":1},"_meta":{"com.example/k":"link"}},` +
		`{"type":"resource","resource":{"uri":"rich://docs/embedded","mimeType":"text/plain","text":"embedded text","_meta":{"com.example/k":"inner"}},"annotations":{"audience":["assistant"]},"_meta":{"com.example/k":"embedded"}},` +
		`{"type":"resource","resource":{"uri":"rich://blob","mimeType":"application/octet-stream","blob":"AAECAw=="}}` +
		`],"structuredContent":{"sum":3,"items":["b","a"],"nested":{"z":1.50,"a":null,"big":12345678901234567890,"e":1e3}},` +
		`"_meta":{"com.example/trace":"abc","com.example/n":[1,2.0]},"isError":false,"x-result-future":{"kept":true}}`

	futureResult = `{"content":[{"type":"text","text":"before"},{"type":"x-hologram","frames":[{"t":0,"uri":"rich://holo/0"}],"annotations":{"priority":0.5}}]}`

	promptResult = `{"description":"A brief","messages":[` +
		`{"role":"user","content":{"type":"text","text":"Write a brief","annotations":{"priority":1},"_meta":{"com.example/k":"m1"}}},` +
		`{"role":"assistant","content":{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}},` +
		`{"role":"user","content":{"type":"audio","data":"UklGRiQAAABXQVZF","mimeType":"audio/wav"}},` +
		`{"role":"user","content":{"type":"resource","resource":{"uri":"rich://docs/readme","mimeType":"text/markdown","text":"# Read me\n"}}},` +
		`{"role":"user","content":{"type":"resource_link","uri":"rich://docs/readme","name":"readme","_meta":{"com.example/k":"m5"}}}` +
		`],"_meta":{"com.example/k":"get"},"x-future":true}`

	readmeResult = `{"contents":[{"uri":"rich://docs/readme","mimeType":"text/markdown","text":"# Read me\n","_meta":{"com.example/k":"contents"}}],"_meta":{"com.example/k":"read"}}`

	itemResult = `{"contents":[{"uri":"rich://items/7","mimeType":"application/json","text":"{\"id\":7}"},{"uri":"rich://items/7","mimeType":"application/octet-stream","blob":"AAE="}]}`
)

// failResults are the isError variants of the fail tool.
var failResults = map[string]string{
	"text":       `{"content":[{"type":"text","text":"it broke"}],"isError":true}`,
	"structured": `{"isError":true,"content":[{"type":"text","text":"bad input"}],"structuredContent":{"error":"bad input","code":42}}`,
	"empty":      `{"content":[],"isError":true}`,
	"meta":       `{"_meta":{"com.example/retry":{"after":1.5}},"content":[{"type":"text","text":"try later","annotations":{"audience":["assistant"]}}],"isError":true}`,
}

var outMu sync.Mutex

func main() {
	flag.Parse()
	fmt.Fprintf(os.Stderr, "richserver %q starting (pid %d)\n", *tag, os.Getpid())
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(line, &m) == nil && m.ID != nil && m.Method != "" {
				go handle(m.ID, m.Method, m.Params)
			}
		}
		if err != nil {
			break
		}
	}
	fmt.Fprintln(os.Stderr, "richserver: stdin closed")
}

func handle(id json.RawMessage, method string, params json.RawMessage) {
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(params, &p)
		reply(id, `{"protocolVersion":`+quote(p.ProtocolVersion)+`,"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"prompts":{"listChanged":true}},"serverInfo":{"name":"richserver","version":"1.0.0"}}`)
	case "ping", "resources/subscribe", "resources/unsubscribe":
		reply(id, `{}`)
	case "tools/list":
		reply(id, toolsList)
	case "resources/list":
		reply(id, resourcesList)
	case "resources/templates/list":
		reply(id, templatesList)
	case "prompts/list":
		reply(id, promptsList)
	case "prompts/get":
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(params, &p)
		if p.Name != "brief" {
			replyError(id, -32602, "unknown prompt "+p.Name)
			return
		}
		reply(id, promptResult)
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(params, &p)
		switch p.URI {
		case "rich://docs/readme":
			reply(id, readmeResult)
		case "rich://items/7":
			reply(id, itemResult)
		default:
			replyError(id, -32002, "resource not found: "+p.URI)
		}
	case "tools/call":
		call(id, params)
	default:
		replyError(id, -32601, "method not found: "+method)
	}
}

func call(id, params json.RawMessage) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(params, &p)
	var args struct {
		Kind string `json:"kind"`
		MS   int    `json:"ms"`
	}
	_ = json.Unmarshal(p.Arguments, &args)
	switch p.Name {
	case "rich":
		reply(id, richResult)
	case "fail":
		res, ok := failResults[args.Kind]
		if !ok {
			res = failResults["text"]
		}
		reply(id, res)
	case "future":
		reply(id, futureResult)
	case "args":
		reply(id, `{"content":[{"type":"text","text":`+quote(string(p.Arguments))+`}]}`)
	case "params":
		reply(id, `{"content":[{"type":"text","text":`+quote(string(params))+`}]}`)
	case "whoami":
		reply(id, `{"content":[{"type":"text","text":`+quote(*tag+" "+strconv.Itoa(os.Getpid()))+`}]}`)
	case "sleep":
		time.Sleep(time.Duration(args.MS) * time.Millisecond)
		reply(id, `{"content":[{"type":"text","text":`+quote(fmt.Sprintf("slept %d ms as %s", args.MS, *tag))+`}]}`)
	default:
		replyError(id, -32602, "unknown tool "+p.Name)
	}
}

// quote encodes s as a JSON string, leaving & < > as they are.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func reply(id json.RawMessage, result string) {
	write(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`)
}

func replyError(id json.RawMessage, code int, msg string) {
	write(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":` + strconv.Itoa(code) + `,"message":` + quote(msg) + `}}`)
}

func write(line string) {
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.WriteString(line + "\n")
}
