// Package disclosure decides which tools each endpoint and session of the
// gateway lists, and runs the meta-tools that let a client reach the rest:
// find_tools (ranked search returning compact cards), describe_tools (full
// definitions), call_tool (run any tool by name), and activate / deactivate
// (servers, skills, tools, globs and @bundles).
//
// It works in every protocol era. Clients of the 2025-11-25 revision and
// older have sessions: activation changes that session's tools/list only,
// and the caller sends notifications/tools/list_changed. Clients of the
// stateless 2026-07-28 revision keep a list that depends only on the
// endpoint; activate answers them with the definitions instead, to be run
// through call_tool. Profiles are extra endpoints with a fixed tool set.
//
// The package knows nothing of HTTP or mcp-go: the front end tells it the
// Request (endpoint and session) and gives it a way to call tools.
//
//	d := disclosure.New(disclosure.Options{Mode: disclosure.ModeProgressive})
//	list := d.ToolsJSON(snap, disclosure.Request{Session: "s1"})
//	res, err := d.CallMeta(ctx, snap, disclosure.Request{Session: "s1"},
//		disclosure.Activate, json.RawMessage(`{"targets":["github"]}`), invoke, call)
package disclosure
