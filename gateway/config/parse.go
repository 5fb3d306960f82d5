package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads the config file at path, expanding variables from the
// environment. See Parse.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	defer f.Close()
	return Parse(f, path, os.LookupEnv)
}

// Parse reads a skillgate.yaml from r over Default. name is the file's name,
// used in error positions and to resolve relative folders; lookup resolves
// ${VAR} references (nil means no variable is set). Unknown keys, bad values
// and everything Validate finds are reported together, as *Error values
// joined with errors.Join, sorted by position.
func Parse(r io.Reader, name string, lookup func(string) (string, bool)) (*Config, error) {
	root, err := parseYAML(r, name)
	if err != nil {
		return nil, err
	}
	c := Default()
	c.Source = name
	d := &decoder{file: name, lookup: lookup, expand: true, pos: map[string]Pos{}}
	if root != nil {
		d.decode(root, reflect.ValueOf(c).Elem(), "")
		c.ServerOrder = d.order["servers"]
	}
	c.pos = d.pos
	c.finish()
	errs := d.errs
	for _, e := range c.validate() {
		if !d.spoiled(e.Field) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, joinSorted(errs)
	}
	return c, nil
}

// finish fills per-entry defaults and resolves relative folders.
func (c *Config) finish() {
	base := filepath.Dir(c.Source)
	resolve := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	for _, d := range [][]string{c.Tools.Dirs, c.Pipelines.Dirs, c.Skills.Dirs, c.Plugins.Dirs} {
		for i, p := range d {
			d[i] = resolve(p)
		}
	}
	for name, s := range c.Servers {
		if s == nil {
			s = &Server{}
			c.Servers[name] = s
		}
		if s.Start == "" {
			s.Start = "eager"
		}
		s.Cwd = resolve(s.Cwd)
		s.Pos = c.pos["servers."+name]
	}
	for name, s := range c.Services {
		if s == nil {
			s = &Service{}
			c.Services[name] = s
		}
		s.Pos = c.pos["services."+name]
	}
	for name, e := range c.Executors {
		if e == nil {
			c.Executors[name] = &Executor{}
		}
	}
	for name, b := range c.Bundles {
		if b == nil {
			c.Bundles[name] = &Bundle{}
		}
	}
	for name, p := range c.Profiles {
		if p == nil {
			c.Profiles[name] = &Profile{}
		}
	}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML returns the single document's root node, or nil for an empty file.
func parseYAML(r io.Reader, name string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(r)
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(err, name)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(err, name)
		}
		return nil, &Error{Pos: Pos{File: name, Line: extra.Line, Col: extra.Column},
			Msg: "a second YAML document; keep one document per file (remove the ---)"}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

func yamlError(err error, name string) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{Pos: Pos{File: name, Line: line}, Msg: "invalid YAML: " + m[2]}
	}
	return &Error{Pos: Pos{File: name}, Msg: "invalid YAML: " + msg}
}

// joinSorted joins errs in file order.
func joinSorted(errs []*Error) error {
	slices.SortStableFunc(errs, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col), cmp.Compare(a.Field, b.Field))
	})
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}
