// Command kv is the example's service: a small key-value store on TCP,
// built as a static binary and run in a container FROM scratch.
//
//	kv serve     listen on :6379 until stopped
//	kv health    exit 0 when the local server answers PING (the HEALTHCHECK)
//
// One request per line: PING, SET key value..., GET key, KEYS.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

const addr = ":6379"

func main() {
	switch {
	case len(os.Args) == 2 && os.Args[1] == "serve":
		serve()
	case len(os.Args) == 2 && os.Args[1] == "health":
		os.Exit(health())
	default:
		fmt.Fprintln(os.Stderr, "usage: kv serve | kv health")
		os.Exit(2)
	}
}

func health() int {
	c, err := net.DialTimeout("tcp", "127.0.0.1"+addr, time.Second)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprintln(c, "PING")
	if line, _ := bufio.NewReader(c).ReadString('\n'); strings.TrimSpace(line) != "PONG" {
		fmt.Printf("unexpected answer %q\n", line)
		return 1
	}
	return 0
}

type store struct {
	mu   sync.Mutex
	data map[string]string
}

func (s *store) do(line string) string {
	cmd, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch strings.ToUpper(cmd) {
	case "PING":
		return "PONG"
	case "SET":
		key, val, ok := strings.Cut(rest, " ")
		if !ok || key == "" {
			return "ERR usage: SET key value"
		}
		s.data[key] = val
		return "OK"
	case "GET":
		if v, ok := s.data[rest]; ok {
			return v
		}
		return "(nil)"
	case "KEYS":
		keys := make([]string, 0, len(s.data))
		for k := range s.data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return strings.Join(keys, " ")
	}
	return "ERR unknown command " + cmd
}

func serve() {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("kv: listening on", addr)
	s := &store{data: map[string]string{}}
	for {
		c, err := l.Accept()
		if err != nil {
			continue
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				fmt.Fprintln(c, s.do(sc.Text()))
			}
		}()
	}
}
