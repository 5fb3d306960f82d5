package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillgate/skillgate/bench/internal/mcpclient"
)

// Target from the skills issue: the reference Python skills server
// publishes ~1,100 listings/s at concurrency 16; we aim for 10x that, and
// report it as a share of the same gateway's tools/list.
const targetSkillsRPS = 11000

// skillsMetaTools is how many tools a skills config adds to tools/list.
const skillsMetaTools = 5

// skillsResult is what the skills step measured, per era.
type skillsResult struct {
	skills int
	out    map[mcpclient.Era]map[string]*outcome
}

// skillTopics make the fixture's skills: an ID, a description, tags.
var skillTopics = [][3]string{
	{"code-review", "Review a pull request for correctness, tests and style; use when asked to review a diff or a PR.", "git, review"},
	{"release-notes", "Write release notes from merged pull requests, grouped by kind; use before tagging a release.", "git, docs"},
	{"csv-profile", "Profile a CSV file: columns, types, nulls and outliers; use when the user hands over a CSV.", "data, csv"},
	{"sql-migrations", "Review SQL migrations for locks, long rewrites and missing indexes.", "sql, postgres"},
	{"incident-review", "Write a blameless incident review from a timeline and logs.", "ops, writing"},
	{"log-triage", "Find the first error in a log and the lines around it.", "ops, logs"},
	{"k8s-debug", "Debug a crashing Kubernetes pod: events, logs, probes and limits.", "ops, kubernetes"},
	{"terraform-plan", "Read a terraform plan and flag destroys, replacements and drift.", "infra, terraform"},
	{"api-design", "Design a REST or JSON-RPC API: resources, errors, pagination, versioning.", "api, design"},
	{"brand-voice", "Write copy in the brand's voice, with its word list and tone rules.", "writing, brand"},
}

// writeSkills writes n skills (the topics, numbered past the first round)
// with a body of a few sections each, and returns their folder.
func (b *bench) writeSkills(n int) (string, error) {
	root := filepath.Join(b.dir, "skills")
	for i := range n {
		t := skillTopics[i%len(skillTopics)]
		name := t[0]
		if i >= len(skillTopics) {
			name = fmt.Sprintf("%s-%d", t[0], i/len(skillTopics))
		}
		var body strings.Builder
		fmt.Fprintf(&body, "---\nname: %s\ndescription: %s\ntags: [%s]\n---\n# %s\n\n", name, t[1], t[2], name)
		for s := range 4 {
			fmt.Fprintf(&body, "## Step %d\n\n", s+1)
			for range 4 {
				body.WriteString("Read the input carefully, note what it asks for, and check each claim against the source before you write it down. ")
			}
			body.WriteString("\n\n")
		}
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body.String()), 0o644); err != nil {
			return "", err
		}
	}
	return root, nil
}

// skills serves a skills library of 60 skills beside one upstream of
// -tools tools, and compares skills/list (the extension's method),
// find_skills and load_skill (tools/call) with the same gateway's
// tools/list, at the load generator's concurrency, in both eras.
func (b *bench) skills(ctx context.Context) error {
	const n = 60
	dir, err := b.writeSkills(n)
	if err != nil {
		return err
	}
	cfg := filepath.Join(b.dir, "skills.yaml")
	yaml := fmt.Sprintf("skills: {dirs: [%q]}\nservers:\n  up:\n    command: %q\n    args: [\"-transport\", \"stdio\", \"-tools\", \"%d\"]\n", dir, b.up, b.o.tools)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		return err
	}
	gw, err := startGateway(ctx, b.dir, "gw-skills", b.sg, cfg, b.o.tools+skillsMetaTools)
	if err != nil {
		return err
	}
	defer stopLogged(gw.proc)
	c := mcpclient.NewClient(10 * time.Second)
	defer c.CloseIdleConnections()
	res := &skillsResult{skills: n, out: map[mcpclient.Era]map[string]*outcome{}}
	for _, e := range []mcpclient.Era{mcpclient.Legacy, mcpclient.Modern} {
		ep, err := mcpclient.Connect(ctx, c, gw.url, e)
		if err != nil {
			return err
		}
		list := ep.NewRequest(8, "skills/list", nil, "")
		find := ep.NewRequest(9, "tools/call", map[string]any{"name": "find_skills", "arguments": map[string]any{"query": "review a pull request"}}, "find_skills")
		load := ep.NewRequest(10, "tools/call", map[string]any{"name": "load_skill", "arguments": map[string]any{"skill": "code-review"}}, "load_skill")
		for what, x := range map[string]struct {
			r    mcpclient.Request
			want string
		}{"skills/list": {list, `"skill://code-review/SKILL.md"`}, "find_skills": {find, "code-review: Review a pull request"}, "load_skill": {load, "## Step 4"}} {
			body, err := checked(ctx, c, x.r)
			if err != nil {
				return fmt.Errorf("%s %s: %w", what, e, err)
			}
			if !strings.Contains(string(body), x.want) || strings.Contains(string(body), `"isError":true`) {
				return fmt.Errorf("%s %s: the answer lacks %s: %.300s", what, e, x.want, body)
			}
		}
		out, err := b.compare(ctx, "skills "+string(e), []variant{
			{name: "tools/list", reqs: []mcpclient.Request{ep.ListRequest()}},
			{name: "skills/list", reqs: []mcpclient.Request{list}},
			{name: "find_skills", reqs: []mcpclient.Request{find}},
			{name: "load_skill", reqs: []mcpclient.Request{load}},
		})
		if err != nil {
			return err
		}
		res.out[e] = out
	}
	b.rep.skills = res
	return nil
}

func (r *report) skillsRows() []row {
	s := r.skills
	if s == nil {
		return nil
	}
	var rows []row
	for _, e := range []mcpclient.Era{mcpclient.Legacy, mcpclient.Modern} {
		out := s.out[e]
		if out == nil {
			continue
		}
		base := out["tools/list"]
		for _, k := range []struct{ name, label string }{
			{"skills/list", "skills/list (extension method, one page of 50 entries)"},
			{"find_skills", "find_skills (tools/call, query → ranked cards)"},
			{"load_skill", "load_skill (tools/call, a 2 KB body)"},
		} {
			o := out[k.name]
			ratio := o.meanRPS() / base.meanRPS()
			result := ""
			target := ""
			if k.name != "load_skill" {
				target = fmt.Sprintf("≥ %s/s", commas(targetSkillsRPS))
				result = passMiss(o.meanRPS() >= targetSkillsRPS)
			}
			if o.errors+base.errors > 0 {
				result = fmt.Sprintf("**%d errors**", o.errors+base.errors)
			}
			rows = append(rows,
				row{"7", fmt.Sprintf("%s c%d, %s, %d skills", k.label, r.o.concurrency, eraLabel(e), s.skills),
					"same gateway's tools/list " + rate(base.meanRPS()), rate(o.meanRPS()), fmt.Sprintf("**%.2fx**", ratio), target, result},
				row{"7", fmt.Sprintf("%s sequential p50 / p99, %s", k.name, e),
					us(base.latency.p50) + " / " + us(base.latency.p99), us(o.latency.p50) + " / " + us(o.latency.p99), "", "", ""},
			)
		}
	}
	return rows
}
