package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/skillgate/skillgate/internal/jsonscan"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Tasks (SEP-1686, MCP 2025-11-25). A tool whose definition says
// execution.taskSupport "required" can only be called as a task: the call
// answers with a task id at once, and the result comes from tasks/result.
// The gateway's front end serves no tasks, so the executor runs such a
// tool's task to its end and returns its result as an ordinary call's; the
// definitions it publishes say nothing of tasks (a client would otherwise
// send a task the gateway cannot look up). The task's status messages reach
// the caller as progress.

// taskTTL is the time-to-live asked for a task when the call has no
// deadline; the gateway's request timeout bounds calls anyway.
const taskTTL = 10 * time.Minute

// taskCancelTimeout bounds the tasks/cancel sent when the caller gives up.
const taskCancelTimeout = 5 * time.Second

// withoutTaskSupport records which tools require tasks and returns the
// definitions without an execution.taskSupport of "required" or "optional"
// (an execution left empty goes too). The other members keep their bytes.
func (c *conn) withoutTaskSupport(items []json.RawMessage) []json.RawMessage {
	required := map[string]bool{}
	for i, raw := range items {
		if !bytes.Contains(raw, []byte("taskSupport")) {
			continue
		}
		var name, support string
		var execStart, execEnd int
		var exec json.RawMessage
		jsonscan.Members(raw, func(key, value []byte, start, end int) {
			switch string(key) {
			case "name":
				_ = json.Unmarshal(value, &name)
			case "execution":
				exec, execStart, execEnd = value, start, end
			}
		})
		var e map[string]json.RawMessage
		if exec == nil || json.Unmarshal(exec, &e) != nil || e["taskSupport"] == nil {
			continue
		}
		_ = json.Unmarshal(e["taskSupport"], &support)
		if support != "required" && support != "optional" {
			continue // "forbidden" says what the gateway does anyway
		}
		if support == "required" {
			required[name] = true
		}
		delete(e, "taskSupport")
		var out []byte
		if len(e) > 0 {
			b, err := json.Marshal(e)
			if err != nil {
				continue
			}
			out = append(append(append(out, raw[:execStart]...), b...), raw[execEnd:]...)
		} else {
			out = removeMember(raw, execStart, execEnd)
		}
		if json.Valid(out) {
			items[i] = out
		}
	}
	c.mu.Lock()
	c.taskRequired = required
	c.mu.Unlock()
	return items
}

// removeMember returns obj without the member whose value spans
// obj[start:end], with its key and one comma.
func removeMember(obj []byte, start, end int) []byte {
	// Back from the value over ':' and the key to the comma or brace before.
	k := bytes.LastIndexByte(obj[:start], ':')
	k = bytes.LastIndexByte(obj[:k], '"')         // the key's closing quote
	k = lastUnescapedQuote(obj[:k])               // its opening quote
	before := bytes.TrimRight(obj[:k], " \t\r\n") // ends with ',' or '{'
	after := bytes.TrimLeft(obj[end:], " \t\r\n") // starts with ',' or '}'
	out := make([]byte, 0, len(obj))
	switch {
	case bytes.HasSuffix(before, []byte(",")):
		out = append(append(out, before[:len(before)-1]...), after...)
	case bytes.HasPrefix(after, []byte(",")):
		out = append(append(out, before...), after[1:]...)
	default:
		out = append(append(out, before...), after...)
	}
	return out
}

// lastUnescapedQuote returns the index of the last '"' in b that is not
// escaped: the opening quote of a key whose closing quote ends b.
func lastUnescapedQuote(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != '"' {
			continue
		}
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
	return 0
}

// needsTask reports whether a tools/call's params name a tool that
// requires a task.
func (c *conn) needsTask(params json.RawMessage) bool {
	c.mu.Lock()
	n := len(c.taskRequired)
	c.mu.Unlock()
	if n == 0 {
		return false
	}
	var name string
	jsonscan.Members(params, func(key, value []byte, _, _ int) {
		if string(key) == "name" {
			_ = json.Unmarshal(value, &name)
		}
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.taskRequired[name]
}

// callTask calls a tool as a task and waits for the task's result
// (tasks/result blocks until the task ends). Requests the server makes for
// the task (an elicitation while it is input_required) reach the caller as
// any request of the call. A caller that gives up cancels the task.
func (c *conn) callTask(ctx context.Context, ic *inflight, params json.RawMessage) (json.RawMessage, error) {
	ttl := taskTTL
	if dl, ok := ctx.Deadline(); ok {
		ttl = time.Until(dl)
	}
	p, err := withFields(params, field{"task", json.RawMessage(`{"ttl":` + strconv.FormatInt(max(ttl.Milliseconds(), 1), 10) + `}`)})
	if err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	res, err := c.request(ctx, "tools/call", p)
	if err != nil {
		return nil, err
	}
	var created struct {
		Task *taskStatus `json:"task"`
	}
	if json.Unmarshal(res, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
		return res, nil // answered at once after all
	}
	id := created.Task.TaskID
	c.mu.Lock()
	c.tasks[id] = &taskCall{ic: ic}
	c.mu.Unlock()
	// The status the task starts with is the first progress; a status
	// notification the server sent before this answer found no call.
	c.taskProgress(*created.Task)
	defer func() {
		c.mu.Lock()
		delete(c.tasks, id)
		c.mu.Unlock()
	}()
	rp, err := c.withProtocolMeta(mustJSON(map[string]string{"taskId": id}))
	if err != nil {
		return nil, err
	}
	res, err = c.request(ctx, "tasks/result", rp)
	if err == nil {
		res = withoutRelatedTask(res)
	}
	if err != nil && ctx.Err() != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelTimeout)
		defer cancel()
		if _, cerr := c.request(cctx, "tasks/cancel", rp); cerr != nil {
			c.log.Info("cancelling the upstream's task failed", "task", id, "err", cerr)
		}
	}
	return res, err
}

// relatedTaskKey is the _meta member that ties a message to a task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// withoutRelatedTask returns a task's result without the related-task
// member of its _meta, which names a task the client never asked for: to
// the client this is an ordinary call's result. Every other byte stays,
// and _meta goes only if nothing else was in it.
func withoutRelatedTask(res json.RawMessage) json.RawMessage {
	if !bytes.Contains(res, []byte("related-task")) {
		return res
	}
	metaStart, metaEnd := -1, -1
	jsonscan.Members(res, func(key, _ []byte, start, end int) {
		if string(key) == "_meta" {
			metaStart, metaEnd = start, end
		}
	})
	if metaStart < 0 || res[metaStart] != '{' {
		return res
	}
	meta := res[metaStart:metaEnd]
	for {
		start, end := -1, -1
		jsonscan.Members(meta, func(key, _ []byte, s, e int) {
			if start < 0 && string(key) == relatedTaskKey {
				start, end = s, e
			}
		})
		if start < 0 {
			break
		}
		meta = removeMember(meta, start, end)
	}
	members := 0
	jsonscan.Members(meta, func(_, _ []byte, _, _ int) { members++ })
	var out []byte
	if members == 0 {
		out = removeMember(res, metaStart, metaEnd)
	} else {
		out = make([]byte, 0, len(res))
		out = append(append(append(out, res[:metaStart]...), meta...), res[metaEnd:]...)
	}
	if !json.Valid(out) {
		return res
	}
	return out
}

// taskCall is a task the executor runs for a call.
type taskCall struct {
	ic    *inflight
	steps int    // status messages so far, the progress reported
	last  string // the last one, not repeated
}

// taskStatus is a task's state as CreateTaskResult and
// notifications/tasks/status carry it.
type taskStatus struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
}

// onTaskStatus turns a task's status notification into progress of the
// call that runs it.
func (c *conn) onTaskStatus(params json.RawMessage) {
	var st taskStatus
	if json.Unmarshal(params, &st) == nil {
		c.taskProgress(st)
	}
}

// taskProgress reports a task's status to the call that runs it, as
// progress, unless it says what the last one said.
func (c *conn) taskProgress(st taskStatus) {
	msg := st.StatusMessage
	if msg == "" {
		msg = st.Status
	}
	c.mu.Lock()
	tc := c.tasks[st.TaskID]
	var n int
	if tc != nil && msg != tc.last {
		tc.steps++
		tc.last = msg
		n = tc.steps
	}
	c.mu.Unlock()
	if n == 0 || tc.ic.ev == nil {
		return
	}
	tc.ic.ev.push(event{progress: &sdk.Progress{Progress: float64(n), Message: msg}})
}
