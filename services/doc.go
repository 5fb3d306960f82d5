// Package services runs the Docker containers that tools, servers,
// pipelines and skills depend on (a database, a cache), and MCP servers
// packaged as images.
//
// A Manager holds a project's service definitions (Spec, shaped like a
// compose file's services). Ensure starts what a caller needs on demand —
// once, however many callers ask at the same time — waits until it is
// healthy, and returns the variables that reach it (NAME_HOST, NAME_PORT).
// A service seen healthy recently is answered from memory, so the check on
// every call costs no I/O. Close stops what the manager created, except
// services marked Keep, unless another process still uses the project.
//
// Everything the manager creates carries ownership labels (LabelManaged,
// LabelProject, and LabelOwner naming the process); it lists, adopts, stops
// and prunes only labelled objects. Another manager of the same project —
// a second gateway, or the next one after a crash — adopts the containers
// it finds instead of starting duplicates, and leaves to each process what
// is its own (see NewOwner and Manager.Close). The processes of one machine
// take turns to build and create a service's container (Options.LockDir),
// so replicas that start together make one image and one container.
//
// ServerContainer turns an MCP server image into the docker command line a
// stdio MCP client launches (no Docker client needed).
//
// The Docker client (github.com/docker/docker) is imported by this package
// only, in docker.go, behind the Engine interface.
//
//	m, err := services.New([]services.Spec{{
//		Name:        "cache",
//		Image:       "redis:7",
//		Ports:       []services.Port{{Container: 6379}},
//		Healthcheck: &services.Healthcheck{Test: []string{"CMD", "redis-cli", "ping"}},
//	}}, services.Options{Project: "demo"})
//	if err != nil {
//		return err
//	}
//	defer m.Close(context.Background())
//	env, err := m.Ensure(ctx, "cache") // {"CACHE_HOST": "127.0.0.1", "CACHE_PORT": "49153", ...}
package services
