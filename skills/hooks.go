package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// DefaultHookTimeout bounds one hook run.
const DefaultHookTimeout = 10 * time.Second

// hookTimeout is DefaultHookTimeout; tests shorten it.
var hookTimeout = DefaultHookTimeout

// hookSet is the pre and post hook files of a folder (absolute paths, in
// name order).
type hookSet struct {
	pre, post []string
}

func (h hookSet) empty() bool { return len(h.pre) == 0 && len(h.post) == 0 }

func (h hookSet) add(o hookSet) hookSet {
	return hookSet{pre: append(slices.Clip(h.pre), o.pre...), post: append(slices.Clip(h.post), o.post...)}
}

// findHooks lists dir's pre.* and post.* files.
func findHooks(dir string) hookSet {
	var h hookSet
	entries, err := os.ReadDir(dir)
	if err != nil {
		return h
	}
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		switch {
		case strings.HasPrefix(n, "pre.") || n == "pre":
			h.pre = append(h.pre, filepath.Join(dir, n))
		case strings.HasPrefix(n, "post.") || n == "post":
			h.post = append(h.post, filepath.Join(dir, n))
		}
	}
	return h
}

// HookEvent is what a hook reads as JSON on stdin.
type HookEvent struct {
	// Hook is "pre" or "post".
	Hook string `json:"hook"`
	// Skill is the skill's ID.
	Skill string `json:"skill"`
	// Script is the script's path in the skill folder (scripts/fill.py,
	// ooxml/scripts/unpack.py).
	Script string `json:"script"`
	// Args are the script's command-line arguments.
	Args []string `json:"args"`
	// Input is the JSON the script gets on stdin as "input", if any.
	Input json.RawMessage `json:"input,omitempty"`
	// Env are variables earlier pre hooks injected.
	Env map[string]string `json:"env,omitempty"`
	// Result is the script's CallToolResult (post hooks only).
	Result json.RawMessage `json:"result,omitempty"`
}

// HookDecision is what a hook may print as a JSON object on stdout.
// Printing nothing (or {}) lets the run go on unchanged.
type HookDecision struct {
	// Decision is "deny" (pre: the script never runs) or "fail" (post:
	// the call fails); empty goes on.
	Decision string `json:"decision,omitempty"`
	// Reason is told to the caller of a denied or failed run.
	Reason string `json:"reason,omitempty"`
	// Args replaces the script's arguments (pre).
	Args *[]string `json:"args,omitempty"`
	// Input replaces the script's input (pre).
	Input json.RawMessage `json:"input,omitempty"`
	// Env adds variables to the script's environment (pre).
	Env map[string]string `json:"env,omitempty"`
	// Result replaces the script's CallToolResult (post). A JSON object
	// with "content" is used as it is; any other value becomes its text.
	Result json.RawMessage `json:"result,omitempty"`
}

var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// runHook runs one hook file with ev on stdin (under the sandbox when
// sandbox is set) and returns its decision.
// A hook that fails (exits non-zero, times out, prints something that is
// not a JSON object) fails the run: hooks guard scripts, so they fail
// closed, and the run is denied (a *DeniedError naming the hook file).
func (r *runner) runHook(ctx context.Context, path string, ev *HookEvent, call sdk.Call, sandbox bool) (*HookDecision, error) {
	d, err := r.hook(ctx, path, ev, call, sandbox)
	if err != nil {
		return nil, hookFailed(path, err.Error())
	}
	return d, nil
}

// hookFailed is the error of a run whose hook at path misbehaved: the
// run is denied (hooks fail closed), and the reason names the file.
func hookFailed(path, why string) *DeniedError {
	return &DeniedError{Hook: filepath.Base(path), Reason: fmt.Sprintf("the hook %s %s", path, why)}
}

// hook is runHook; its errors say what went wrong, not which hook.
func (r *runner) hook(ctx context.Context, path string, ev *HookEvent, call sdk.Call, sandbox bool) (*HookDecision, error) {
	args, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	dir, file := filepath.Split(path)
	rt, err := runtimeOf(path)
	if err != nil {
		return nil, fmt.Errorf("cannot run: %v", err)
	}
	pol := Policy{Timeout: hookTimeout, StallTimeout: hookTimeout, Sandbox: sandbox}
	res, err := r.call(ctx, scriptKey{dir: filepath.Clean(dir), entry: file, runtime: rt, policy: pol.key(), hook: true}, pol, nil, args, call)
	if err != nil {
		return nil, fmt.Errorf("could not run: %w", err)
	}
	var cr struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Meta struct {
			Status string `json:"skillgate/status"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res, &cr); err != nil {
		return nil, fmt.Errorf("returned a bad result: %v", err)
	}
	var text string
	for _, c := range cr.Content {
		if c.Type == "text" {
			text += c.Text
		}
	}
	if cr.IsError {
		return nil, errors.New(hookFailure(cr.Meta.Status, strings.TrimSpace(text)))
	}
	var d HookDecision
	raw := cr.StructuredContent
	if len(raw) == 0 {
		if strings.TrimSpace(text) == "" {
			return &d, nil
		}
		raw = json.RawMessage(text)
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("printed something that is not a decision object ({\"decision\": ..., \"reason\": ...}): %v", err)
	}
	for k := range d.Env {
		if !envNameRE().MatchString(k) || strings.HasPrefix(k, "SKILLGATE_") {
			return nil, fmt.Errorf("set env %q, which is not a variable name a hook may set", k)
		}
	}
	return &d, nil
}

// hookFailure says how a hook failed, from the script executor's status
// and text. The executor speaks of tools and their tool.yaml, which a
// hook has not: a hook's limits are fixed.
func hookFailure(status, text string) string {
	_, output, _ := strings.Cut(text, "\n\n") // what it printed, after the executor's sentence
	var msg string
	switch status {
	case "timeout", "stalled":
		msg = fmt.Sprintf("was still running after %v, the time a hook gets, and was killed; make it faster", hookTimeout)
	default:
		return "failed: " + text
	}
	if output != "" {
		msg += "\n\n" + output
	}
	return msg
}

// DeniedError is the error of a run a hook refused or failed.
type DeniedError struct {
	// Hook is the hook's file name.
	Hook string
	// Reason is what the hook said.
	Reason string
}

func (e *DeniedError) Error() string {
	r := e.Reason
	if r == "" {
		r = "no reason given"
	}
	return fmt.Sprintf("denied by hook %s: %s", e.Hook, r)
}

func (e *DeniedError) Unwrap() error { return ErrDenied }
