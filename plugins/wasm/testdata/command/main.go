// Command guest is the WASI command module the wasm executor's tests run:
// the "op" argument picks what it does.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

type args struct {
	Op   string `json:"op"`
	Text string `json:"text"`
	Path string `json:"path"`
	Name string `json:"name"`
	N    int    `json:"n"`
}

func main() {
	var a args
	if err := json.NewDecoder(os.Stdin).Decode(&a); err != nil {
		fmt.Fprintln(os.Stderr, "bad arguments:", err)
		os.Exit(2)
	}
	out := json.NewEncoder(os.Stdout)
	switch a.Op {
	case "echo":
		out.Encode(map[string]any{"echo": a.Text})
	case "text":
		fmt.Print(a.Text)
	case "progress":
		for i := 1; i <= a.N; i++ {
			fmt.Fprintf(os.Stderr, `{"progress":%d,"total":%d,"message":"step %d"}`+"\n", i, a.N, i)
		}
		fmt.Fprintln(os.Stderr, "plain log line")
		out.Encode(map[string]any{"steps": a.N})
	case "fail":
		fmt.Println("partial output")
		for i := 0; i < 50; i++ {
			fmt.Fprintf(os.Stderr, "log line %d\n", i)
		}
		fmt.Fprintln(os.Stderr, "something broke")
		os.Exit(3)
	case "panic":
		panic("guest panic")
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
	case "read":
		b, err := os.ReadFile(a.Path)
		if err != nil {
			out.Encode(map[string]any{"error": err.Error()})
			return
		}
		out.Encode(map[string]any{"content": string(b)})
	case "write":
		err := os.WriteFile(a.Path, []byte("written by wasm"), 0o644)
		if err != nil {
			out.Encode(map[string]any{"error": err.Error()})
			return
		}
		out.Encode(map[string]any{"ok": true})
	case "env":
		v, ok := os.LookupEnv(a.Name)
		out.Encode(map[string]any{"value": v, "set": ok, "all": os.Environ()})
	case "clock":
		t0 := time.Now()
		time.Sleep(20 * time.Millisecond)
		out.Encode(map[string]any{"unix_nano": t0.UnixNano(), "slept_ns": time.Since(t0).Nanoseconds()})
	case "rand":
		b := make([]byte, 16)
		rand.Read(b)
		out.Encode(map[string]any{"rand": hex.EncodeToString(b)})
	default:
		fmt.Fprintf(os.Stderr, "unknown op %q\n", a.Op)
		os.Exit(2)
	}
}
