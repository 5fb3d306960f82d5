package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/jsonscan"
	"github.com/skillgate/skillgate/internal/oneline"
)

// toolArgs are a tool's arguments as the command line gives them: one
// JSON object (--json) and key=value pairs (--arg) laid over it.
type toolArgs struct {
	rawJSON string
	kv      []string
}

// build returns the arguments as a JSON object. An --arg value is taken as
// JSON when it parses (numbers, true, objects), and as a string otherwise;
// when schema, the tool's inputSchema, says a property is a string, its
// --arg value stays the text as typed (message=123 sends "123"). Numbers
// keep every digit they were written with.
func (a toolArgs) build(schema json.RawMessage) (json.RawMessage, error) {
	args := map[string]json.RawMessage{}
	if a.rawJSON != "" {
		if got := jsonKind(a.rawJSON); got != "an object" {
			return nil, fmt.Errorf(`--json must be a JSON object such as '{"name":"value"}', not %s`, got)
		}
		if err := json.Unmarshal([]byte(a.rawJSON), &args); err != nil {
			return nil, fmt.Errorf(`--json must be a JSON object such as '{"name":"value"}': %w`, err)
		}
	}
	strs := stringProperties(schema)
	for _, p := range a.kv {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: write key=value", p)
		}
		if json.Valid([]byte(v)) && !(strs[k] && !strings.HasPrefix(strings.TrimSpace(v), `"`)) {
			args[k] = json.RawMessage(v)
			continue
		}
		s, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		args[k] = s
	}
	return json.Marshal(args)
}

// jsonKind names what s is as JSON: "an object", "an array", "a string",
// "a number", "a boolean", "null", or text that is not JSON.
func jsonKind(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "empty text"
	}
	if err := json.Unmarshal([]byte(s), new(any)); err != nil {
		return fmt.Sprintf("'%s', which is not JSON (%v)", oneline.Cut(s, 40), err)
	}
	return jsonscan.Kind([]byte(s))
}

// stringProperties names the properties of an inputSchema whose type is
// string (alone, or with null).
func stringProperties(schema json.RawMessage) map[string]bool {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := map[string]bool{}
	for name, p := range s.Properties {
		var one string
		var many []string
		switch {
		case json.Unmarshal(p.Type, &one) == nil:
			out[name] = one == "string"
		case json.Unmarshal(p.Type, &many) == nil:
			n := 0
			for _, t := range many {
				if t == "string" {
					out[name] = true
				}
				if t != "null" {
					n++
				}
			}
			out[name] = out[name] && n == 1
		}
	}
	return out
}

// remote is what a command needs to reach a running gateway.
type remote struct{ url, token string }

// flags adds --url and --token to cmd, alike on every command that can
// talk to a running gateway.
func (r *remote) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&r.url, "url", "", "use a running gateway instead of starting the config's servers: its URL "+
		"(http://127.0.0.1:8811, or 127.0.0.1:8811) or one of its MCP endpoints (.../mcp, .../mcp/p/PROFILE)")
	cmd.Flags().StringVar(&r.token, "token", "", "bearer token, for a gateway with auth.tokens (default $SKILLGATE_TOKEN)")
}

// bearer is --token, or $SKILLGATE_TOKEN.
func (r *remote) bearer() string {
	if r.token != "" {
		return r.token
	}
	return os.Getenv("SKILLGATE_TOKEN")
}

// base is the gateway's own URL, where /readyz and /stats are: --url
// without its MCP endpoint's path (/mcp, /mcp/p/PROFILE).
func (r *remote) base() string {
	u, err := url.Parse(gateway.MCPURL(r.url))
	if err != nil {
		return strings.TrimSuffix(r.url, "/")
	}
	if i := strings.Index(u.Path+"/", "/mcp/"); i >= 0 {
		u.Path, u.RawPath = u.Path[:i], ""
	}
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimSuffix(u.String(), "/")
}

// inputSchema is the inputSchema of a tool definition.
func inputSchema(tool json.RawMessage) json.RawMessage {
	var d struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	_ = json.Unmarshal(tool, &d)
	return d.InputSchema
}
