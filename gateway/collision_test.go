package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// A collision that goes away (a reload drops one of the two servers) is
// logged as resolved, once.
func TestCollisionResolvedLogged(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	server := "\n    command: " + argv[0] + "\n    args: [" + strings.Join(argv[1:], ", ") + "]"
	one := "servers:\n  everything:" + server + "\n"
	r := startGateway(t, one+"  twin:"+server+"\n    namespace: everything\n", nil)
	r.waitReady(t, "everything", "twin")
	const logged = `msg="name collision" kind=tool name=everything__echo`
	waitFor(t, func() bool { return strings.Contains(r.log.String(), logged) })
	if strings.Contains(r.log.String(), "name collision resolved") {
		t.Fatalf("a collision logged as resolved before it was:\n%s", r.log.String())
	}
	cfg, err := config.Parse(strings.NewReader(one), "test.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.gw.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	const resolved = `msg="name collision resolved" kind=tool name=everything__echo winner=everything loser=twin`
	if n := strings.Count(r.log.String(), resolved); n != 1 {
		t.Fatalf("%d records of %s after the reload; want 1:\n%s", n, resolved, r.log.String())
	}
}
