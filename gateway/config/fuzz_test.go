package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addSeeds(f *testing.F, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// allInServers reports whether every problem of err, from Parse, is in a
// servers entry.
func allInServers(err error) bool {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var ce *Error
		if errors.As(e, &ce) && ce.Field == "" && strings.HasPrefix(ce.Msg, "... and ") {
			continue // joinSorted's count of the problems left out
		}
		if !errors.As(e, &ce) || !strings.HasPrefix(ce.Field, "servers.") {
			return false
		}
	}
	return true
}

// FuzzParse checks that no input makes Parse panic or hang, and that what
// it accepts also passes Validate.
func FuzzParse(f *testing.F) {
	addSeeds(f, "testdata/valid/*.yaml")
	addSeeds(f, "testdata/invalid/*.yaml")
	f.Add([]byte("a: &a [*a, *a]\nb: &b {<<: [*b, *a]}\n"))
	f.Add([]byte("servers: {s: {command: '${A:-${B:-$${C}}}'}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lookup := func(k string) (string, bool) { return strings.ToLower(k), len(k)%2 == 0 }
		run, runErr := ParseForRun(bytes.NewReader(data), "fuzz.yaml", lookup)
		cfg, err := Parse(bytes.NewReader(data), "fuzz.yaml", lookup)
		if runErr == nil && err != nil && !allInServers(err) {
			t.Fatalf("ParseForRun accepted a config with problems outside servers: %v", err)
		}
		if runErr == nil && err != nil {
			for _, s := range run.Servers {
				if s.Problem != nil {
					return
				}
			}
			t.Fatalf("ParseForRun accepted a config Parse rejects, with no server failed: %v", err)
		}
		if err != nil {
			return
		}
		if runErr != nil {
			t.Fatalf("ParseForRun rejected a config Parse accepts: %v", runErr)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a config Validate rejects: %v", err)
		}
		if _, err := MarshalServers(cfg.Servers, cfg.ServerOrder); err != nil {
			t.Fatalf("MarshalServers: %v", err)
		}
	})
}

// FuzzImport checks that no input makes Import or Merge panic, and that
// the servers Import accepts validate once their variables are set.
func FuzzImport(f *testing.F) {
	addSeeds(f, "testdata/import/*.json")
	f.Add([]byte(`{"servers": {"a": {"args": [[[[]]]], "env": {"A": "${input:x}${env:Y}$${z}"}}},}`))
	f.Add([]byte(`{"mcpServers": {"tools": {"command": "x"}, "tools-server": {"url": "http://h/${A:-b}"}, "a b": {"command": "y", "headers": {"": ""}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := Import(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			return
		}
		if _, err := Merge([]byte("servers: {}\n"), "skillgate.yaml", im.Servers, im.Order, true); err != nil {
			t.Fatalf("Merge: %v", err)
		}
		out, err := MarshalServers(im.Servers, im.Order)
		if err != nil {
			t.Fatalf("MarshalServers: %v", err)
		}
		parseImported(t, out)
	})
}
