//go:build !linux

package script

import (
	"runtime"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/toolspec"
)

// Off Linux a tool that asks for the sandbox or for ulimits is refused
// with the platform named, never run without them.
func TestSandboxNeedsLinux(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ name, yaml, want string }{
		{"sandbox", "sandbox: {enabled: true}\n", "sandbox.enabled needs bubblewrap"},
		{"ulimits", "ulimits: {open_files: 64}\n", "ulimits need prlimit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := folder(t, "name: t\ndescription: d\nruntime: python\nentry: t.py\n"+tc.yaml, map[string]string{"t.py": "print('hi')\n"})
			_, err := h.load(tc.name, dir, toolspec.Limits{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), runtime.GOOS) {
				t.Fatalf("load = %v, want an error with %q that names %s", err, tc.want, runtime.GOOS)
			}
		})
	}
}
