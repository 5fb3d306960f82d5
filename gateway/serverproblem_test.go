package gateway_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// TestServerEntryProblemFailsOneServer: a servers entry with a mistake
// (args misspelt arg, a name that cannot be a namespace) fails that
// server only, as `skillgate run` reads the config: /readyz shows it
// failed with the file:line of the mistake, the name as written, quoted,
// when the name is the mistake; ERROR is logged; the other server serves
// calls. A reload whose only problems are such entries is applied: the
// fixed server starts, the newly broken one fails, the rest stay.
func TestServerEntryProblemFailsOneServer(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	cmd := "command: " + strconv.Quote(argv[0])
	args := "[" + strings.Join(argv[1:], ", ") + "]"
	parse := func(yaml string) *config.Config {
		t.Helper()
		cfg, err := config.ParseForRun(strings.NewReader(yaml), "run.yaml", func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("ParseForRun: %v", err)
		}
		if _, err := config.Parse(strings.NewReader(yaml), "run.yaml", nil); err == nil {
			t.Fatal("Parse (skillgate validate) accepted the config")
		}
		return cfg
	}
	first := "disclosure: all\nservers:\n" +
		"  everything: {" + cmd + ", args: " + args + "}\n" +
		"  typo: {" + cmd + ", arg: " + args + "}\n" +
		"  my.server: {" + cmd + ", args: " + args + "}\n"
	s := serveConfig(t, parse(first))
	s.waitStarted(t)
	st := s.waitReady(t, "everything")
	for name, want := range map[string]string{
		"typo":        `not started: run.yaml:4:` + strconv.Itoa(len("  typo: {"+cmd+", ")+1) + `: servers.typo.arg: unknown key; did you mean "args"?`,
		`"my.server"`: `not started: run.yaml:5:3: servers.my.server: server name "my.server" must be 1-64 letters, digits, _ or -`,
	} {
		if got := st[name]; got.State != "failed" || !strings.HasPrefix(got.LastError, want) {
			t.Errorf("%s is %+v; want failed with %q...", name, got, want)
		}
	}
	if _, ok := st["my.server"]; ok {
		t.Errorf("my.server is listed unquoted: %+v", st)
	}
	for _, src := range []string{"typo", `"\"my.server\""`} {
		if want := `level=ERROR msg="server not started" source=` + src; strings.Count(s.log.String(), want) != 1 {
			t.Errorf("the log has not one %s", want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, s.url+"/mcp", legacyVersion)
	if res, err := c.call(ctx, "tools/call", `{"name":"everything__echo","arguments":{"message":"still here"}}`); err != nil || !strings.Contains(string(res), "still here") {
		t.Fatalf("everything__echo: %s, %v", res, err)
	}

	// The typo fixed, everything broken: applied as a reload.
	second := "disclosure: all\nservers:\n" +
		"  everything: {" + cmd + ", args: " + args + ", start: never}\n" +
		"  typo: {" + cmd + ", args: " + args + "}\n"
	if err := s.gw.Reload(ctx, parse(second)); err != nil {
		t.Fatal(err)
	}
	st = s.waitReady(t, "typo")
	if got := st["everything"]; got.State != "failed" || !strings.Contains(got.LastError, `run.yaml:3:`) || !strings.Contains(got.LastError, `servers.everything.start: unknown value "never"`) {
		t.Errorf("after the reload everything is %+v; want failed with its start", got)
	}
	if _, ok := st[`"my.server"`]; ok {
		t.Errorf(`"my.server" is still listed after the reload removed it: %+v`, st)
	}
	if res, err := c.call(ctx, "tools/call", `{"name":"typo__echo","arguments":{"message":"fixed"}}`); err != nil || !strings.Contains(string(res), "fixed") {
		t.Fatalf("typo__echo: %s, %v", res, err)
	}
}
