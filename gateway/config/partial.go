package config

import (
	"errors"
	"io"
	"strings"
)

// LoadForValidate is Load for `skillgate validate`: see ParseForValidate.
func LoadForValidate(path string) (*Config, error) { return load(path, modeValidate) }

// ParseForValidate is Parse that, when the file could be read as YAML,
// returns the config along with its problems: each field that has one
// keeps its default or what could be read of it, and the rest is as
// written. It lets `skillgate validate` also check the pipelines and
// skills of a config with a problem elsewhere (an unknown key, a bad
// value), reporting every problem at once; use ProblemIn to tell whether
// a part was read whole. The config is nil when the file is not YAML at
// all or cannot be read.
func ParseForValidate(r io.Reader, name string, lookup func(string) (string, bool)) (*Config, error) {
	return parse(r, name, lookup, modeValidate)
}

// ProblemIn reports whether err, as Parse and ParseForValidate return
// it, holds a problem in one of the fields named (such as "pipelines")
// or inside it, or one without a field (the file as a whole).
func ProblemIn(err error, fields ...string) bool {
	if err == nil {
		return false
	}
	for _, e := range unjoin(err) {
		var ce *Error
		if !errors.As(e, &ce) || ce.Field == "" {
			return true
		}
		for _, f := range fields {
			if ce.Field == f || strings.HasPrefix(ce.Field, f+".") || strings.HasPrefix(ce.Field, f+"[") {
				return true
			}
		}
	}
	return false
}
