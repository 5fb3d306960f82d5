package main

import (
	"strings"
	"testing"
)

// A bad SKILLGATE_EXECUTOR_PROTOCOL stops run before anything starts, and
// says which values work.
func TestExecutorProtocolEnv(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int
		err   string
	}{
		{"", 0, ""},
		{"2", 2, ""},
		{"1", 1, ""},
		{"0", 0, "from 1 to"},
		{"9", 0, "from 1 to"},
		{"two", 0, `SKILLGATE_EXECUTOR_PROTOCOL="two"`},
	} {
		t.Setenv("SKILLGATE_EXECUTOR_PROTOCOL", tc.value)
		got, err := executorProtocol()
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("%q: %d, %v; want %d", tc.value, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: err %v, want one mentioning %q", tc.value, err, tc.err)
		}
		if _, _, err := runCLI(t, "run", "--listen", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "SKILLGATE_EXECUTOR_PROTOCOL") {
			t.Errorf("run with %q: %v, want the variable's error", tc.value, err)
		}
	}
}
