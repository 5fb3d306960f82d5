// Package host is the gateway's side of executor plugins: it discovers,
// launches, handshakes, supervises, restarts and kills them.
//
// An executor plugin is a process serving the plugins/sdk contract through
// hashicorp/go-plugin (gRPC only). [Start] launches one and returns a
// [*Plugin], which implements [sdk.Executor] and [sdk.Watcher] itself, on
// top of whichever process currently runs: when the process dies, in-flight
// calls fail at once with an error wrapping [sdk.ErrPluginShutdown], the
// process is relaunched with capped exponential backoff, every source loaded
// before is loaded again, and the new definitions reach the watchers as an
// [sdk.Change]. A [Manager] holds a gateway's plugins by name and kills them
// all on Close.
//
// A start is a launch, go-plugin's handshake and an Info answer that
// passes sdk.Info.Validate, within [Options.StartTimeout]. Restarts go on
// for as long as it takes once a version of the plugin's file (its size
// and modification time) has started. A version that never did is given
// up on ([ErrGaveUp]) after three failed launches in a row, or at the
// first when trying again cannot help: it speaks no protocol version of
// the host's, it is not a plugin, or its Info is invalid. The host then
// logs that once and does not run the file again until it changes (or
// [Manager.ForgetFailures]); a Manager remembers this across Starts of
// the same name.
//
//	m := host.NewManager(host.Options{Logger: logger})
//	defer m.Close()
//	specs, problems := host.Discover([]string{"./plugins"}) // third-party executors
//	for _, err := range problems {
//		logger.Warn("plugin skipped", "error", err)
//	}
//	for _, spec := range specs {
//		exec, err := m.Start(ctx, spec)
//		if err != nil {
//			return err // says which executor and why
//		}
//		defs, err := exec.Load(ctx, sdk.LoadRequest{Source: "greeter", Kind: "hello", Spec: json.RawMessage(`{}`)})
//		...
//	}
//
// # Built-in executors
//
// Built-ins (mcp, script, wasm) ship in the skillgate binary and still run
// out of process: the gateway re-executes its own binary with hidden
// arguments, and the cmd layer serves the named executor from there with
// [ServeBuiltin], sdk.Serve plus a shutdown that leaves nothing behind:
//
//	self, err := os.Executable()
//	...
//	exec, err := m.Start(ctx, host.Spec{Name: "mcp", Path: self, Args: []string{"plugin", "serve", "mcp"}})
//
// so one binary ships everything and a crashing executor never takes the
// gateway down.
//
// # Processes
//
// A plugin process gets a clean environment (PATH, HOME, TMPDIR and LANG
// from the gateway, the kill window as sdk.EnvKillWindow, then
// [Spec.Env]), stdin from a pipe the gateway never writes (never the
// gateway's own stdin, which is the MCP stream in stdio mode), and leads a
// session and process group of its own. When it exits, or when it is
// killed, its process group is SIGKILLed, and on Linux every other process
// left in its session too, so that what it started dies with it even when
// it moved a child to a process group of its own (as an executor does to
// kill an upstream server's tree). A plugin killed while it runs (at the
// end of the kill window) also takes its descendants that started a
// session of its own. On Linux the plugin process also gets a variable of
// its own (SKILLGATE_TREE_<id>, see childproc.StartMarked), which its
// descendants inherit, and once it is gone, however it ended (a crash,
// SIGKILL, a shutdown), every process that carries it is SIGKILLed: a
// daemon an upstream server started by a double fork too, which an
// executor that crashed could not stop. Elsewhere, and on Linux a
// descendant that runs without the variable (env -i, sudo), a process
// orphaned before the plugin was killed escapes the gateway and is the
// executor's to stop (sdk.Shutdowner). Each line the plugin writes to
// stdout or stderr becomes a record of [Options.Logger] with an "executor"
// attribute; JSON lines (hclog's or slog's) keep their level, message and
// fields.
//
// Closing a plugin asks it to stop and gives it [Options.KillWindow] to
// exit before it is killed. That window is the budget of the plugin's own
// ordered shutdown: sdk.Serve hands an executor that implements
// sdk.Shutdowner a context that ends shortly before it, and the mcp
// executor fits its upstreams' shutdown grace into that deadline.
//
// A gateway that is killed (SIGKILL, a crash) can do none of this; all a
// plugin learns is that its stdin reached EOF. sdk.Serve then shuts the
// executor down (sdk.Shutdowner) before the process exits. A built-in
// executor serves through [ServeBuiltin], whose shutdown stops everything
// the executor started, grandchildren included, and removes go-plugin's
// socket directory, whether the gateway stopped it, it got SIGTERM, or the
// gateway is gone.
//
// Sessions and process groups are a Unix thing; on Windows the plugin's
// process tree is killed instead (untested).
package host
