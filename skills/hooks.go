package skills

import (
	"context"
	"encoding/json"
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
	// Script is the script's path in the skill folder (scripts/...).
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

// runHook runs one hook file with ev on stdin and returns its decision.
// A hook that fails (exits non-zero, times out, prints something that is
// not a JSON object) fails the run: hooks guard scripts, so they fail
// closed.
func (r *runner) runHook(ctx context.Context, path string, ev *HookEvent, call sdk.Call) (*HookDecision, error) {
	args, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	dir, file := filepath.Split(path)
	rt, err := runtimeOf(path)
	if err != nil {
		return nil, fmt.Errorf("hook %s: %v", path, err)
	}
	pol := Policy{Timeout: DefaultHookTimeout, StallTimeout: DefaultHookTimeout}
	res, err := r.call(ctx, scriptKey{dir: filepath.Clean(dir), entry: file, runtime: rt, policy: pol.key(), hook: true}, pol, nil, args, call)
	if err != nil {
		return nil, fmt.Errorf("hook %s: %w", path, err)
	}
	var cr struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &cr); err != nil {
		return nil, fmt.Errorf("hook %s: bad result: %v", path, err)
	}
	var text string
	for _, c := range cr.Content {
		if c.Type == "text" {
			text += c.Text
		}
	}
	if cr.IsError {
		return nil, fmt.Errorf("hook %s failed: %s", filepath.Base(path), strings.TrimSpace(text))
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
		return nil, fmt.Errorf("hook %s printed something that is not a decision object ({\"decision\": ..., \"reason\": ...}): %v", filepath.Base(path), err)
	}
	for k := range d.Env {
		if !envNameRE().MatchString(k) || strings.HasPrefix(k, "SKILLGATE_") {
			return nil, fmt.Errorf("hook %s: env %q is not a variable name a hook may set", filepath.Base(path), k)
		}
	}
	return &d, nil
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
