package skills

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureSkills are realistic skills for the fixture library: name, team
// ("" for none), tags and description.
var fixtureSkills = []struct{ name, team, tags, desc string }{
	{"pdf-forms", "", "pdf, forms", "Fill, flatten and validate PDF forms; extract their fields first."},
	{"pdf-merge", "", "pdf", "Merge, split and reorder PDF pages without losing bookmarks."},
	{"docx-edit", "", "word, office", "Edit Word documents with tracked changes and comments kept."},
	{"xlsx-formulas", "", "excel, office", "Build spreadsheets with formulas, named ranges and charts."},
	{"pptx-deck", "", "slides, office", "Turn an outline into a slide deck with the company template."},
	{"csv-clean", "", "csv, data", "Clean a CSV: trim, dedupe, fix encodings and date formats."},
	{"json-schema", "", "json, api", "Write and check JSON Schemas for API payloads."},
	{"sql-review", "", "sql, database", "Review SQL migrations for locks, missing indexes and rollbacks."},
	{"pg-tuning", "", "postgres, database", "Tune PostgreSQL settings and queries from EXPLAIN output."},
	{"redis-keys", "", "redis, cache", "Find hot and large Redis keys and suggest TTLs."},
	{"k8s-debug", "", "kubernetes, ops", "Debug failing Kubernetes pods: events, probes, limits."},
	{"helm-chart", "", "kubernetes, helm", "Write Helm charts with values documented and linted."},
	{"terraform-plan", "", "terraform, iac", "Read a Terraform plan and flag destructive changes."},
	{"docker-slim", "", "docker", "Shrink Docker images with multi-stage builds and distroless bases."},
	{"ci-failures", "", "ci, logs", "Find why a CI job failed from its log, first error first."},
	{"gh-actions", "", "ci, github", "Write GitHub Actions workflows with caching and matrices."},
	{"git-bisect", "", "git", "Find the commit that broke a test with git bisect run."},
	{"release-notes", "", "git, writing", "Write release notes from conventional commits."},
	{"changelog", "", "writing", "Keep a changelog in the Keep a Changelog format."},
	{"api-design", "", "api, http", "Design REST endpoints: naming, pagination, errors, versioning."},
	{"openapi-lint", "", "api, openapi", "Lint OpenAPI documents and fix common mistakes."},
	{"grpc-proto", "", "grpc, api", "Evolve protobuf schemas without breaking clients."},
	{"go-tests", "", "go, testing", "Write table-driven Go tests with fakes instead of mocks."},
	{"go-profiling", "", "go, performance", "Profile Go programs with pprof and read flame graphs."},
	{"python-typing", "", "python", "Add type hints to Python code and pass mypy strict."},
	{"python-packaging", "", "python", "Package a Python project with pyproject.toml and wheels."},
	{"node-upgrade", "", "node, javascript", "Upgrade a Node.js project across major versions safely."},
	{"react-a11y", "", "react, accessibility", "Check React components for accessibility problems."},
	{"css-layout", "", "css, frontend", "Fix CSS layouts with flexbox and grid."},
	{"webapp-testing", "", "testing, browser", "Test web apps end to end with a headless browser."},
	{"regex-builder", "", "regex, text", "Build and explain regular expressions with test cases."},
	{"unicode-text", "", "text, unicode", "Handle Unicode text: normalization, width, grapheme clusters."},
	{"log-parsing", "", "logs", "Parse logs into fields for counting and alerting."},
	{"incident-review", "acme", "incident, writing", "Write a blameless incident review with timeline and actions."},
	{"oncall-handoff", "acme", "oncall", "Hand over on-call with open issues, risks and follow-ups."},
	{"refunds", "acme", "billing, support", "Process refund requests per Acme's policy and limits."},
	{"invoices", "acme", "billing", "Issue and correct invoices in Acme's billing system."},
	{"brand-voice", "acme", "writing, marketing", "Write in Acme's brand voice: short, warm, concrete."},
	{"security-review", "acme", "security", "Review a change for injection, authz and secrets handling."},
	{"threat-model", "acme", "security", "Draw a threat model with STRIDE for a new service."},
	{"data-retention", "acme", "privacy, compliance", "Apply Acme's data retention rules to a dataset."},
	{"gdpr-request", "acme", "privacy", "Answer a GDPR access or deletion request end to end."},
	{"sales-call-notes", "globex", "sales", "Turn sales call notes into CRM fields and next steps."},
	{"quarterly-report", "globex", "finance, writing", "Assemble the quarterly report from the finance exports."},
	{"budget-forecast", "globex", "finance", "Forecast next quarter's budget from actuals and plans."},
	{"hiring-loop", "globex", "hiring", "Plan an interview loop with rubrics per competency."},
	{"okr-draft", "globex", "planning", "Draft OKRs that are measurable and few."},
	{"meeting-minutes", "", "writing, meetings", "Write minutes: decisions, owners, dates; no transcripts."},
	{"translation-review", "", "i18n, writing", "Review translations for meaning, tone and placeholders."},
	{"mcp-builder", "", "mcp, api", "Build an MCP server with tools, resources and tests."},
	{"skill-creator", "", "skills, writing", "Write a new skill: frontmatter, body, scripts, references."},
	{"algorithmic-art", "", "art, p5js", "Make generative art with p5.js and seeded randomness."},
}

// fixtureLibrary writes the fixture skills and four malformed ones.
func fixtureLibrary(t testing.TB) string {
	dir := t.TempDir()
	files := map[string]string{}
	for _, s := range fixtureSkills {
		p := s.name
		if s.team != "" {
			p = s.team + "/" + s.name
		}
		files[p+"/SKILL.md"] = fmt.Sprintf("---\nname: %s\ndescription: %q\ntags: [%s]\n---\n# %s\n\n## When to use\n\n%s\n\n## Steps\n\n1. Read the input.\n2. Follow references/guide.md.\n", s.name, s.desc, s.tags, s.name, s.desc)
		files[p+"/references/guide.md"] = "# Guide for " + s.name + "\n"
	}
	files["bad-yaml/SKILL.md"] = "---\nname: bad-yaml\ndescription: [unclosed\n---\n"
	files["no-frontmatter/SKILL.md"] = "# Just a title\n"
	files["bad-name/SKILL.md"] = "---\nname: Bad Name!\ndescription: spaces\n---\n"
	files["acme/no-desc/SKILL.md"] = "---\nname: no-desc\n---\n"
	writeTree(t, dir, files)
	return dir
}

func TestFixtureLibrary(t *testing.T) {
	l := openLib(t, Options{Dirs: []string{fixtureLibrary(t)}})
	snap := l.Snapshot()
	if n := len(snap.Skills()); n != len(fixtureSkills) || n < 50 {
		t.Fatalf("%d skills", n)
	}
	var broken []string
	for _, p := range snap.Problems() {
		broken = append(broken, filepath.Base(filepath.Dir(p.Path)))
	}
	if strings.Join(broken, " ") != "no-desc bad-name bad-yaml no-frontmatter" {
		t.Errorf("problems: %v", snap.Problems())
	}
	// Every level works for every skill.
	total := 0
	for _, sk := range snap.Skills() {
		total += len(sk.Card())
		if _, _, err := l.Body(sk); err != nil {
			t.Error(err)
		}
		if _, err := l.Section(sk, "steps"); err != nil {
			t.Error(err)
		}
		if f, err := l.ReadFile(sk, "references/guide.md", 0); err != nil || !strings.Contains(string(f.Data), sk.Meta.Name) {
			t.Error(sk.ID, err)
		}
	}
	// Cards are about 30 tokens (4 bytes a token) on average.
	if avg := total / len(snap.Skills()); avg > 30*4 {
		t.Errorf("average card %d bytes", avg)
	}
	top := func(q string) string {
		m := snap.Find(q, "")
		if len(m) == 0 {
			return ""
		}
		return m[0].Skill.ID
	}
	for q, want := range map[string]string{
		"refund a customer":            "acme/refunds",
		"why did my CI job fail":       "ci-failures",
		"tune postgres":                "pg-tuning",
		"threat model for new service": "acme/threat-model",
		"pdf form":                     "pdf-forms",
		"write an mcp server":          "mcp-builder",
	} {
		if got := top(q); got != want {
			t.Errorf("find %q: %s, want %s", q, got, want)
		}
	}
}

func BenchmarkRefreshUnchanged1000(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{}
	for i := range 1000 {
		n := fmt.Sprintf("skill-%04d", i)
		files[fmt.Sprintf("team-%02d/%s/SKILL.md", i%20, n)] = skillMD(n, "A skill for benchmarks.")
	}
	writeTree(b, dir, files)
	l := openLib(b, Options{Dirs: []string{dir}})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if changed, _ := l.Refresh(ctx); changed {
			b.Fatal("changed")
		}
	}
}

func BenchmarkFind(b *testing.B) {
	l := openLib(b, Options{Dirs: []string{fixtureLibrary(b)}})
	snap := l.Snapshot()
	b.ReportAllocs()
	for b.Loop() {
		snap.Find("write release notes from git", "")
	}
}

func BenchmarkLoadSkill(b *testing.B) {
	l := openLib(b, Options{Dirs: []string{fixtureLibrary(b)}})
	srv := NewServer(l)
	b.ReportAllocs()
	for b.Loop() {
		srv.CallTool(context.Background(), ToolLoad, []byte(`{"skill":"acme/refunds"}`), nil)
	}
}
