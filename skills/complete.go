package skills

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// maxCompletions is how many values completion/complete returns, as MCP
// allows at most 100.
const maxCompletions = 100

// complete answers completion/complete for the skill:// template: the
// path argument is completed with the skills the request may see
// ("csv-insights/") and, once a skill is named, with its files
// ("csv-insights/references/guide.md"). A skill's prompt takes no
// arguments, so anything else completes to nothing.
func (s *Server) complete(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	}
	_ = json.Unmarshal(params, &p)
	var values []string
	if p.Ref.Type == "ref/resource" && strings.HasPrefix(p.Ref.URI, "skill://") {
		values = s.completePath(ctx, p.Argument.Value)
	}
	total := len(values)
	if len(values) > maxCompletions {
		values = values[:maxCompletions]
	}
	return json.Marshal(map[string]any{"completion": map[string]any{
		"values": append([]string{}, values...), "total": total, "hasMore": total > len(values),
	}})
}

// completePath returns the skill:// paths that start with prefix: skill
// IDs with a trailing "/" until one is named whole, then that skill's
// files. Paths come escaped as skill:// URIs have them (my%20file.md); the
// prefix may be escaped or not.
func (s *Server) completePath(ctx context.Context, prefix string) []string {
	plain := prefix
	if dec, err := url.PathUnescape(prefix); err == nil {
		plain = dec
	}
	has := func(p, raw string) bool { return strings.HasPrefix(p, prefix) || strings.HasPrefix(raw, plain) }
	var out []string
	for _, sk := range s.skills(ctx) {
		id := sk.ID + "/"
		switch {
		case strings.HasPrefix(plain, id) || strings.HasPrefix(prefix, escapePath(id)):
			for _, f := range listFiles(sk.Dir, "", maxCompletions*10) {
				if p := escapePath(id + f); sk.listed(f) && has(p, id+f) {
					out = append(out, p)
				}
			}
		case has(escapePath(id), id):
			out = append(out, escapePath(id))
		}
	}
	slices.Sort(out)
	return out
}
