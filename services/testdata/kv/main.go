// Command kv is a tiny TCP key-value server for the services tests, built
// static and run FROM scratch.
//
//	kv serve [-addr :6379]     serve until killed
//	kv health [-addr ...]      exit 0 when the server answers PING, else 1
//	kv quiet                   exit 0 and print nothing (a silent health check)
//
// The protocol is one line per request: PING, SET key value, GET key.
// With KV_HEALTH_FAIL set, health always fails and says so, so tests get an
// unhealthy container; with KV_EXIT set, serve exits at once with that code,
// or after KV_EXIT_AFTER (a Go duration) when that is set too.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kv serve|health [-addr host:port]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	addr := fs.String("addr", ":6379", "address")
	fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "serve":
		serve(*addr)
	case "health":
		os.Exit(health(*addr))
	case "quiet":
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}

func health(addr string) int {
	if v := os.Getenv("KV_HEALTH_FAIL"); v != "" {
		fmt.Println("simulated failure:", v)
		return 1
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprintln(c, "PING")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "PONG" {
		fmt.Println("bad answer:", line, err)
		return 1
	}
	fmt.Println("PONG")
	return 0
}

func serve(addr string) {
	if v := os.Getenv("KV_EXIT"); v != "" {
		code, _ := strconv.Atoi(v)
		if d, err := time.ParseDuration(os.Getenv("KV_EXIT_AFTER")); err == nil {
			time.Sleep(d)
		}
		fmt.Println("exiting with", code, "as KV_EXIT asks")
		os.Exit(code)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("kv listening on", l.Addr())
	var mu sync.Mutex
	data := map[string]string{}
	for {
		c, err := l.Accept()
		if err != nil {
			continue
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) == 0 {
					continue
				}
				mu.Lock()
				switch {
				case f[0] == "PING":
					fmt.Fprintln(c, "PONG")
				case f[0] == "SET" && len(f) == 3:
					data[f[1]] = f[2]
					fmt.Fprintln(c, "OK")
				case f[0] == "GET" && len(f) == 2:
					v, ok := data[f[1]]
					if !ok {
						v = "NIL"
					}
					fmt.Fprintln(c, v)
				default:
					fmt.Fprintln(c, "ERR unknown command")
				}
				mu.Unlock()
			}
		}()
	}
}
