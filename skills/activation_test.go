package skills

import (
	"reflect"
	"strings"
	"testing"
)

func TestActivation(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"report/SKILL.md":             skillMD("report", "Reports.", "requires: {skills: [sql, charts], servers: [pg], tools: [\"fs__read_*\"]}\n"),
		"sql/SKILL.md":                skillMD("sql", "SQL.", "requires: {services: [postgres], skills: [report]}\n"),
		"sql/tools/explain/tool.yaml": "name: explain\n",
		"charts/SKILL.md":             skillMD("charts", "Charts.", "requires: {skills: [ghost], servers: [pg, plot]}\n"),
		"charts/pipelines/x.yaml":     "",
		"acme/a/SKILL.md":             skillMD("a", "A.", "requires: {skills: [b]}\n"),
		"acme/b/SKILL.md":             skillMD("b", "B.", "requires: {services: [redis]}\n"),
	})
	l := openLib(t, Options{Dirs: []string{dir}})
	a, err := l.Snapshot().Activation("report")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Skills, []string{"report", "sql", "charts"}) || !reflect.DeepEqual(a.Servers, []string{"pg", "plot"}) ||
		!reflect.DeepEqual(a.Services, []string{"postgres"}) || !reflect.DeepEqual(a.Missing, []string{"ghost"}) ||
		len(a.ToolDirs["sql"]) != 1 || a.PipelineDirs["charts"] == "" {
		t.Errorf("%+v", a)
	}
	if got := strings.Join(a.Targets(), " "); got != "skill:report skill:sql skill:charts server:pg server:plot fs__read_*" {
		t.Errorf("targets %s", got)
	}
	if a, _ := l.Snapshot().Activation("acme/a"); !reflect.DeepEqual(a.Skills, []string{"acme/a", "acme/b"}) || a.Services[0] != "redis" {
		t.Errorf("team: %+v", a)
	}
	probs := l.Snapshot().Check([]string{"pg"}, []string{"postgres", "redis"})
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.Field+": "+p.Msg)
	}
	if got := strings.Join(msgs, "; "); got != "requires.skills: skill ghost is not installed; requires.servers: server plot is not in the config" {
		t.Errorf("check: %s", got)
	}
}
