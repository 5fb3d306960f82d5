package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/services"
)

// serviceGroup is the admin group of the service tools, activated as
// @services: services__ls, __up, __down, __status, __logs, __rm, __prune —
// the verbs of `skillgate services`.
const serviceGroup = "services"

func init() {
	adminGroups[serviceGroup] = "Docker services the tools depend on: list them, start them (with pull and build progress), stop, inspect, read logs, remove and prune skillgate's leftovers"
	adminExecutors[serviceGroup] = func(g *Gateway) sdk.Executor { return serviceAdmin{g} }
}

const namesSchema = `{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"},"description":"services; empty means all"}}}`

var serviceAdminTools = []json.RawMessage{
	toolDef("ls", "List services", "Every declared service with its state, health, ports on 127.0.0.1 and policy, as last seen; one not seen within docker.health_ttl is asked about again.",
		`{"type":"object","properties":{}}`, false, true),
	toolDef("status", "Service status", "Ask the engine about services: state, health and the last health check's output, ports, the variables users get.",
		namesSchema, false, true),
	toolDef("up", "Start services", "Start services (all when names is empty) with their dependencies, whatever their policy, and wait until healthy. Image pulls and builds report progress. rebuild builds images with a build context again.",
		`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"}},"rebuild":{"type":"boolean"}}}`, false, false),
	toolDef("down", "Stop services", "Stop and remove the containers of services (all when names is empty); volumes are kept.",
		namesSchema, true, false),
	toolDef("logs", "Service logs", "The last lines a service's container wrote (stdout and stderr).",
		`{"type":"object","properties":{"name":{"type":"string"},"tail":{"type":"integer","minimum":1,"default":100}},"required":["name"]}`, false, true),
	toolDef("rm", "Remove services and their data", "Stop and remove services' containers AND their named volumes: the data is gone.",
		`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"},"minItems":1}},"required":["names"]}`, true, false),
	toolDef("prune", "Prune leftovers", "Remove skillgate's leftovers, only objects carrying its labels: stopped containers, containers of services no longer declared, unused volumes of services no longer declared (all unused with volumes: true), unused networks, and with images: true images it built that a later build left untagged.",
		`{"type":"object","properties":{"volumes":{"type":"boolean"},"all_projects":{"type":"boolean"},"images":{"type":"boolean"}}}`, true, false),
}

// serviceAdmin serves the services group in process.
type serviceAdmin struct{ g *Gateway }

var _ sdk.Executor = serviceAdmin{}

func (a serviceAdmin) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "gateway", Version: a.g.opts.Version, Kinds: []string{"admin"}}, nil
}

func (a serviceAdmin) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Source != adminSourceID(serviceGroup) {
		return sdk.Definitions{}, fmt.Errorf("%w: %s", sdk.ErrUnknownSource, req.Source)
	}
	return sdk.Definitions{Tools: serviceAdminTools}, nil
}

func (a serviceAdmin) Unload(context.Context, string) error { return nil }

func (a serviceAdmin) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	if req.Method != "tools/call" {
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: req.Method + " is not served by the gateway's service tools"}
	}
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Names       []string `json:"names"`
			Name        string   `json:"name"`
			Rebuild     bool     `json:"rebuild"`
			Tail        int      `json:"tail"`
			Volumes     bool     `json:"volumes"`
			AllProjects bool     `json:"all_projects"`
			Images      bool     `json:"images"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return toolAdminError(fmt.Sprintf("arguments: %v", err)), nil
	}
	state := a.g.svc.Load()
	var m *services.Manager
	if state != nil {
		m = state.m
	}
	if m == nil {
		msg := "the config declares no services"
		if err := a.g.svcErr(); err != nil {
			msg = err.Error()
		}
		return toolAdminError(msg), nil
	}
	args := p.Arguments
	switch p.Name {
	case "ls":
		st := a.g.ServicesStatus(ctx)
		return toolAdminResult(FormatServices(st), map[string]any{"services": st}), nil
	case "status":
		st, err := m.Status(ctx, args.Names...)
		if err != nil {
			return toolAdminError(err.Error()), nil
		}
		return toolAdminResult(FormatServiceDetails(st), map[string]any{"services": st}), nil
	case "up":
		err := m.Up(ctx, progressToCall(call), args.Rebuild, args.Names...)
		for a.g.handedOver(state, err) {
			// A reload replaced the manager while the services started.
			if state = a.g.svc.Load(); state.m == nil {
				return toolAdminError(state.err.Error()), nil
			}
			m = state.m
			err = m.Up(ctx, progressToCall(call), args.Rebuild, args.Names...)
		}
		st, _ := m.Status(ctx, args.Names...)
		if err != nil {
			return toolAdminError(err.Error()), nil
		}
		return toolAdminResult(FormatServices(st), map[string]any{"services": st}), nil
	case "down":
		if err := m.Down(ctx, args.Names...); err != nil {
			return toolAdminError(err.Error()), nil
		}
		return toolAdminResult("stopped "+orAll(args.Names), map[string]any{"stopped": args.Names}), nil
	case "rm":
		if len(args.Names) == 0 {
			return toolAdminError("rm needs names: it deletes the services' data"), nil
		}
		if err := m.Remove(ctx, args.Names...); err != nil {
			return toolAdminError(err.Error()), nil
		}
		return toolAdminResult("removed "+strings.Join(args.Names, ", ")+" with their volumes", map[string]any{"removed": args.Names}), nil
	case "logs":
		tail := args.Tail
		if tail <= 0 {
			tail = 100
		}
		var b strings.Builder
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := m.Logs(lctx, args.Name, services.LogOptions{Tail: tail}, &limitWriter{w: &b, n: 256 << 10}); err != nil {
			return toolAdminError(err.Error()), nil
		}
		return toolAdminResult(b.String(), map[string]any{"name": args.Name, "logs": b.String()}), nil
	case "prune":
		rep, err := m.Prune(ctx, services.PruneOptions{Volumes: args.Volumes, AllProjects: args.AllProjects, Images: args.Images})
		if err != nil {
			return toolAdminError(err.Error()), nil
		}
		text := fmt.Sprintf("removed %d containers %v, %d volumes %v, %d networks %v, %d images %v",
			len(rep.Containers), rep.Containers, len(rep.Volumes), rep.Volumes, len(rep.Networks), rep.Networks, len(rep.Images), rep.Images)
		return toolAdminResult(text, rep), nil
	}
	return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "unknown service tool " + p.Name}
}

func orAll(names []string) string {
	if len(names) == 0 {
		return "all services"
	}
	return strings.Join(names, ", ")
}

// progressToCall forwards pull and build progress as MCP progress
// notifications, at most every 200ms, plus each build step.
func progressToCall(call sdk.Call) func(services.Progress) {
	if call == nil {
		return nil
	}
	var mu sync.Mutex
	var last time.Time
	var lastStep int64
	return func(p services.Progress) {
		mu.Lock()
		defer mu.Unlock()
		newStep := p.Phase == "build" && p.Current != lastStep
		if !newStep && time.Since(last) < 200*time.Millisecond {
			return
		}
		last, lastStep = time.Now(), p.Current
		_ = call.Progress(sdk.Progress{Progress: float64(p.Current), Total: float64(p.Total), Message: p.Service + ": " + p.Phase + " " + p.Message})
	}
}

// FormatServices renders statuses as a table, one service per line.
func FormatServices(st []services.Status) string {
	if len(st) == 0 {
		return "no services declared\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s %-10s %-8s %-7s %s\n", "SERVICE", "STATE", "POLICY", "KEEP", "PORTS")
	for _, s := range st {
		var ports []string
		for _, k := range slices.Sorted(maps.Keys(s.Ports)) {
			ports = append(ports, fmt.Sprintf("127.0.0.1:%d->%s", s.Ports[k], k))
		}
		keep := "no"
		if s.Keep {
			keep = "yes"
		}
		fmt.Fprintf(&b, "%-16s %-10s %-8s %-7s %s\n", s.Service, s.State, s.Policy, keep, strings.Join(ports, ", "))
		if s.LastError != "" {
			fmt.Fprintf(&b, "  last error: %s\n", s.LastError)
		}
		if s.State == services.StateUnhealthy && s.HealthLog != "" {
			fmt.Fprintf(&b, "  last health check: %s\n", s.HealthLog)
		}
	}
	return b.String()
}

// FormatServiceDetails renders statuses in detail, a block per service:
// container, image, policy, ports, the variables users get, the last
// health check and error. `skillgate services status` and services__status
// show it.
func FormatServiceDetails(st []services.Status) string {
	var b strings.Builder
	for i, s := range st {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s", s.Service, s.State)
		if s.Health != "" {
			fmt.Fprintf(&b, " (health %s)", s.Health)
		}
		fmt.Fprintf(&b, "\n  container  %s", s.Container)
		if s.ID != "" {
			fmt.Fprintf(&b, " (%s)", s.ID)
		}
		fmt.Fprintf(&b, "\n  image      %s\n  policy     %s, keep %v\n", s.Image, s.Policy, s.Keep)
		for _, k := range slices.Sorted(maps.Keys(s.Ports)) {
			fmt.Fprintf(&b, "  port       %s on 127.0.0.1:%d\n", k, s.Ports[k])
		}
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			fmt.Fprintf(&b, "  env        %s=%s\n", k, s.Env[k])
		}
		if s.HealthLog != "" {
			fmt.Fprintf(&b, "  last check %s\n", oneline.Cut(s.HealthLog, 200))
		}
		if s.LastError != "" {
			fmt.Fprintf(&b, "  last error %s\n", s.LastError)
		}
	}
	return b.String()
}

// limitWriter keeps at most n bytes.
type limitWriter struct {
	w interface{ WriteString(string) (int, error) }
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	q := p
	if len(q) > l.n {
		q = q[:l.n]
	}
	l.n -= len(q)
	_, err := l.w.WriteString(string(q))
	return len(p), err
}
