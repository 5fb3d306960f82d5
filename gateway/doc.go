// Package gateway wires skillgate's rooms together: it reads a config,
// starts the executors (built-in ones by re-executing the skillgate binary,
// third-party ones from plugin dirs), loads every source into them, keeps
// the catalog snapshot current as sources change, and serves it through the
// MCP front end over HTTP or stdio.
//
//	cfg, _ := config.Load("skillgate.yaml")
//	gw, _ := gateway.New(gateway.Options{Config: cfg})
//	err := gw.Run(ctx) // blocks until ctx is done, then shuts everything down
package gateway
