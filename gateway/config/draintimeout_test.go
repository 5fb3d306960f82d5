package config

import (
	"errors"
	"strings"
	"testing"
)

// TestStdioReadsDrainTimeout: limits.drain_timeout bounds the drain of
// `run --stdio` too, so over stdio a ${VAR} not set in it is an error, as
// for HTTP, not a Note that drops the setting.
func TestStdioReadsDrainTimeout(t *testing.T) {
	cfg, err := ParseForStdio(strings.NewReader("limits: {drain_timeout: \"${SG_T_DRAIN}\"}\n"), "f.yaml", nil)
	if err == nil || !errors.Is(err, ErrUndefinedVariable) || !strings.Contains(err.Error(), "limits.drain_timeout") {
		var notes []*Error
		if cfg != nil {
			notes = cfg.Notes
		}
		t.Errorf("ParseForStdio = %v (notes %v), want the unset variable in limits.drain_timeout as an error", err, notes)
	}
}
