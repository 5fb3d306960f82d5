//go:build wasip1

// Reactor guest is the reactor module the wasm executor's tests run. Each
// call of the exported "run" reads the arguments from stdin and writes its
// result to stdout.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {}

var (
	calls int
	id    string // tells instances apart
)

func init() {
	b := make([]byte, 8)
	rand.Read(b)
	id = hex.EncodeToString(b)
	fmt.Fprintln(os.Stderr, "reactor instance", id, "initialized")
}

//go:wasmexport run
func run() int32 {
	calls++
	var a struct {
		Op   string `json:"op"`
		Text string `json:"text"`
		N    int    `json:"n"`
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "read stdin:", err)
		return 1
	}
	if bytes.HasPrefix(in, []byte(`{"op":"ping"`)) {
		// No JSON work: what the executor costs, for the benchmarks.
		os.Stdout.Write(in)
		return 0
	}
	if err := json.Unmarshal(in, &a); err != nil {
		fmt.Fprintln(os.Stderr, "bad arguments:", err)
		return 1
	}
	out := json.NewEncoder(os.Stdout)
	switch a.Op {
	case "echo":
		out.Encode(map[string]any{"echo": a.Text, "calls": calls, "id": id})
	case "progress":
		for i := 1; i <= a.N; i++ {
			fmt.Fprintf(os.Stderr, `{"progress":%d,"total":%d}`+"\n", i, a.N)
		}
		out.Encode(map[string]any{"steps": a.N})
	case "sleep":
		fmt.Fprintln(os.Stderr, "sleeping")
		time.Sleep(time.Duration(a.N) * time.Millisecond)
		out.Encode(map[string]any{"slept_ms": a.N, "id": id})
	case "clock":
		out.Encode(map[string]any{"unix_nano": time.Now().UnixNano()})
	case "rand":
		b := make([]byte, 16)
		rand.Read(b)
		out.Encode(map[string]any{"rand": hex.EncodeToString(b)})
	case "fail":
		fmt.Fprintln(os.Stderr, "reactor failure")
		return 7
	case "loop":
		fmt.Fprintln(os.Stderr, "looping forever")
		for {
		}
	case "bomb":
		var keep [][]byte
		for {
			keep = append(keep, make([]byte, 1<<20))
			keep[len(keep)-1][0] = 1
		}
	case "env":
		out.Encode(map[string]any{"all": os.Environ()})
	case "read":
		b, err := os.ReadFile(a.Text)
		if err != nil {
			out.Encode(map[string]any{"error": err.Error()})
			break
		}
		out.Encode(map[string]any{"content": string(b)})
	case "panic":
		panic("reactor panic")
	default:
		fmt.Fprintf(os.Stderr, "unknown op %q\n", a.Op)
		return 2
	}
	return 0
}
