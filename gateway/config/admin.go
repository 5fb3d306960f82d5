package config

import (
	"fmt"
	"net"
	"strings"
)

// Admin says who may call the gateway's management tools.
type Admin struct {
	// Writes says which clients may call the management tools that change
	// what the gateway runs (registering a tool, creating a pipeline,
	// adding a skills repository, starting a service; the gateway lists
	// them): WritesTrusted (the default), WritesAll or WritesNone. The
	// read-only management tools (servers, stats, *_list, ...) are open to
	// every client.
	Writes string `yaml:"writes"`
}

// The values of admin.writes.
const (
	// WritesTrusted lets the stdio client (the user who started the
	// gateway) and HTTP requests that present a token of auth.tokens call
	// the write tools. Without auth.tokens no HTTP request may.
	WritesTrusted = "trusted"
	// WritesAll lets every client that reaches the gateway call them.
	WritesAll = "all"
	// WritesNone lets nobody call them; no endpoint serves them.
	WritesNone = "none"
)

// admin checks admin.writes.
func (v *validator) admin() {
	v.oneOf("admin.writes", v.c.Admin.Writes, WritesTrusted, WritesAll, WritesNone, "")
}

// ListenWarning returns a warning, at listen.http, when the HTTP front end
// at addr (host:port; listen.http, or the address a listener got) is
// reachable beyond this machine's loopback interface and auth.tokens is
// empty: every client that reaches the port may then call every tool the
// gateway serves. It returns nil for a loopback address or when tokens are
// set.
func (c *Config) ListenWarning(addr string) *Error {
	if len(c.Auth.Tokens) > 0 || LoopbackAddr(addr) {
		return nil
	}
	writes := "the management tools that change what it runs (tool__register, pipeline__create, skill__repo_add, ...) stay refused to them under admin.writes: trusted"
	if c.Admin.Writes == WritesAll {
		writes = "and with admin.writes: all they may also register tools and pipelines and add skills repositories, which run code as this user"
	}
	at, field := c.where("listen.http"), "listen.http"
	if flag := c.listenFlag(); flag != "" {
		at, field = Pos{}, flag
	}
	// A listener on every interface reports [::]:PORT: told as written
	// (listen.http or the flag), or as 0.0.0.0:PORT.
	shown, all := ShownAddr(addr)
	if written, wAll := ShownAddr(c.Listen.HTTP); all && wAll && written == shown {
		shown = c.Listen.HTTP
	}
	return &Error{Pos: at, Field: field,
		Msg: fmt.Sprintf("%s listens beyond loopback and auth.tokens is empty: any process or person that can reach this port "+
			"(other users of this machine, other machines on the network) may call every tool the gateway serves, as the user running it; %s. "+
			"Set auth: {tokens: [\"${SKILLGATE_TOKEN}\"]} and have clients send Authorization: Bearer <token>, "+
			"or listen on 127.0.0.1 (listen.http or --listen)", shown, writes)}
}

// SetListen sets listen.http to addr, given on the command line with the
// flag named flag (--listen): ListenWarning then names the flag, not the
// config file, as where the address comes from.
func (c *Config) SetListen(addr, flag string) {
	c.Listen.HTTP = addr
	if c.pos == nil {
		c.pos = map[string]Pos{}
	}
	c.pos["listen.http"] = Pos{File: flag}
}

// listenFlag returns the flag SetListen took listen.http from, or "".
func (c *Config) listenFlag() string {
	if p := c.pos["listen.http"]; p.Line == 0 && strings.HasPrefix(p.File, "-") {
		return p.File
	}
	return ""
}

// ShownAddr returns addr (host:port) as a user can paste it, and whether it
// binds every interface: a listener on every interface reports [::]:8811
// or 0.0.0.0:8811, written :8811 in a config, and all are shown
// 0.0.0.0:8811.
func ShownAddr(addr string) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, false
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return addr, false
	}
	return net.JoinHostPort("0.0.0.0", port), true
}

// ServingURL is the URL of the MCP endpoint of a listener at addr, for the
// log: a listener on every interface is told as
// "http://0.0.0.0:8811/mcp (all interfaces)".
func ServingURL(addr string) string {
	shown, all := ShownAddr(addr)
	if all {
		return "http://" + shown + "/mcp (all interfaces)"
	}
	return "http://" + shown + "/mcp"
}

// LoopbackAddr reports whether addr (host:port, or a bare host) names
// only this machine's loopback interface: localhost or a loopback IP. An
// empty host (":8811"), 0.0.0.0 and :: bind every interface, and any other
// name may resolve to a public address.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
