package services

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Default limits of an MCP server container (ServerContainer).
const (
	DefaultServerCPUs   = 1.0
	DefaultServerMemory = 512 << 20
	DefaultServerPIDs   = 256
)

// ServerContainer is an MCP server run as a container with stdio attached:
// the gateway's mcp executor launches Command like any stdio server, and
// the docker CLI connects the container's stdin and stdout to it.
type ServerContainer struct {
	// Project and Server name the container and label it.
	Project string
	Server  string
	// Owner is the owner id (NewOwner) of the gateway that runs it: part of
	// the container's name and a label, so gateways of one project run
	// their own containers and clean up only theirs (Manager.RemoveServers).
	Owner string
	// Image is the server's image.
	Image string
	// Args are the container's command (after the image).
	Args []string
	// EnvNames are passed into the container as -e NAME, without values:
	// the docker CLI reads each value from its own environment, which the
	// executor sets from the server's env, so no secret is on a command line.
	EnvNames []string
	// Network is "none" (the default) or "bridge".
	Network string
	// ProjectNetwork puts the container on the project's network instead,
	// where it reaches the services by name (Manager.NetworkWiring): for a
	// server that requires services.
	ProjectNetwork bool
	// CPUs, Memory (bytes) and PIDs are limits; zero means the defaults.
	CPUs   float64
	Memory int64
	PIDs   int64
	// Docker is the docker CLI; the default is "docker" from PATH.
	Docker string
}

// Check reports a value that cannot be passed safely.
func (c *ServerContainer) Check() error {
	switch {
	case !ValidProject(c.Project):
		return fmt.Errorf("%w: project %q", ErrInvalidSpec, c.Project)
	case !ValidName(c.Server):
		return fmt.Errorf("%w: server name %q", ErrInvalidSpec, c.Server)
	case !ValidImage(c.Image):
		return fmt.Errorf("%w: server %s: %q is not an image reference", ErrInvalidSpec, c.Server, c.Image)
	case c.Network != "" && c.Network != "none" && c.Network != "bridge":
		return fmt.Errorf("%w: server %s: network %q is not none or bridge", ErrInvalidSpec, c.Server, c.Network)
	case c.ProjectNetwork && c.Network != "":
		return fmt.Errorf("%w: server %s: network %q and the project's network both set", ErrInvalidSpec, c.Server, c.Network)
	case c.CPUs < 0 || c.Memory < 0 || c.PIDs < 0:
		return fmt.Errorf("%w: server %s: negative limit", ErrInvalidSpec, c.Server)
	case c.Owner != "" && !ownerRe().MatchString(c.Owner):
		return fmt.Errorf("%w: server %s: owner %q", ErrInvalidSpec, c.Server, c.Owner)
	}
	for _, n := range c.EnvNames {
		if !envKeyRe().MatchString(n) {
			return fmt.Errorf("%w: server %s: %q is not an environment variable name", ErrInvalidSpec, c.Server, n)
		}
	}
	return nil
}

// Command returns the program and arguments that run the server:
//
//	docker run --rm -i --init --security-opt no-new-privileges --cap-drop ALL
//	  --network none --cpus 1 --memory 536870912 --pids-limit 256
//	  --label ... --name skillgate.<project>.mcp.<server>.<owner> [-e NAME]... IMAGE [ARGS]...
//
// docker stops reading flags at the image, so Args can never become docker
// flags; Check makes sure the image itself cannot be one.
func (c *ServerContainer) Command() (string, []string) {
	docker := c.Docker
	if docker == "" {
		docker = "docker"
	}
	network := c.Network
	switch {
	case c.ProjectNetwork:
		network = NetworkName(c.Project)
	case network == "":
		network = "none"
	}
	cpus, mem, pids := c.CPUs, c.Memory, c.PIDs
	if cpus == 0 {
		cpus = DefaultServerCPUs
	}
	if mem == 0 {
		mem = DefaultServerMemory
	}
	if pids == 0 {
		pids = DefaultServerPIDs
	}
	args := []string{
		"run", "--rm", "-i", "--init",
		"--security-opt", "no-new-privileges",
		"--cap-drop", "ALL",
		"--network", network,
		"--cpus", strconv.FormatFloat(cpus, 'f', -1, 64),
		"--memory", strconv.FormatInt(mem, 10),
		"--pids-limit", strconv.FormatInt(pids, 10),
		"--log-driver", "none",
	}
	labels := withLabels(c.Project, LabelRole, RoleServer, LabelServer, c.Server)
	if c.Owner != "" {
		labels[LabelOwner] = c.Owner
	}
	for _, k := range sortedKeys(labels) {
		args = append(args, "--label", k+"="+labels[k])
	}
	args = append(args, "--name", ServerContainerName(c.Project, c.Server, c.Owner))
	names := slices.Clone(c.EnvNames)
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		args = append(args, "-e", n)
	}
	args = append(args, c.Image)
	args = append(args, c.Args...)
	return docker, args
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// String is the command line, for logs and `skillgate servers`; it holds
// no environment values.
func (c *ServerContainer) String() string {
	cmd, args := c.Command()
	return cmd + " " + strings.Join(args, " ")
}
