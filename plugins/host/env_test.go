package host

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/childproc"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// A plugin gets what childproc lets a child inherit on this system (on
// Windows also SystemRoot, PATHEXT, APPDATA and the like), then the SDK's
// variables, then the spec's; nothing else of the gateway's environment.
func TestChildEnv(t *testing.T) {
	t.Setenv("PATH", "/usr/bin")
	t.Setenv("SKILLGATE_TEST_SECRET", "x")
	env := childEnv(2*time.Second, []string{"EXTRA=1"})
	want := append(childproc.Env(), sdk.EnvExitOnStdinEOF+"=1", sdk.EnvKillWindow+"=2s", "EXTRA=1")
	if !slices.Equal(env, want) {
		t.Fatalf("childEnv =\n%q\nwant\n%q", env, want)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "SKILLGATE_TEST_SECRET=") {
			t.Errorf("childEnv passed on %s", kv)
		}
	}
	if v, _ := childproc.LookupEnv(env, "PATH"); v != "/usr/bin" {
		t.Errorf("PATH = %q, want the gateway's", v)
	}
}
