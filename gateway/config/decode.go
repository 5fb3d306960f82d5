package config

import (
	"encoding"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	suggestpkg "github.com/skillgate/skillgate/internal/suggest"

	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree into Go values strictly: every key must
// name a field, every value must fit its type, and every problem is kept.
// yaml.v3's own Node.Decode loses KnownFields strictness in nested nodes.
// It follows aliases without counting: readDocument has checked that none
// loops and that they bring a bounded number of values.
type decoder struct {
	file   string
	lookup func(string) (string, bool)
	expand bool
	// lenient turns unknown keys into warnings.
	lenient bool

	warns   []*Error
	errs    []*Error
	bad     map[string]bool     // fields with a decode error
	unknown map[string]bool     // fields holding an unknown key
	blank   map[string]string   // fields whose ${VAR}s expanded to "" -> the text written
	fromEnv map[string]bool     // fields that took a value from the environment (a ${VAR} it set)
	vars    map[string][]varUse // field -> the ${VAR}s the environment set in it, in order
	pos     map[string]Pos      // field path -> where it was written
	order   map[string][]string // map field path -> keys in file order
}

// spoiled reports whether field or a field inside it failed to decode,
// so a validation error there would only echo the decode error.
func (d *decoder) spoiled(field string) bool {
	for b := range d.bad {
		if b == field || strings.HasPrefix(b, field+".") || strings.HasPrefix(b, field+"[") {
			return true
		}
	}
	return false
}

func (d *decoder) at(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

func (d *decoder) fail(n *yaml.Node, field string, err error, format string, args ...any) {
	if d.bad == nil {
		d.bad = map[string]bool{}
	}
	d.bad[field] = true
	d.errs = append(d.errs, &Error{Pos: d.at(n), Field: field, Msg: fmt.Sprintf(format, args...), Err: err})
}

// nodeDecoder is a type that reads more than one YAML shape itself (a
// service's depends_on: a mapping, or a list of names).
type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, field string)
}

var (
	posType      = reflect.TypeFor[Pos]()
	nodeType     = reflect.TypeFor[*yaml.Node]()
	unmarshalerT = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (d *decoder) decode(n *yaml.Node, v reflect.Value, field string) {
	if n.Kind == yaml.AliasNode {
		d.decode(n.Alias, v, field)
		return
	}
	if d.pos != nil && field != "" {
		if _, ok := d.pos[field]; !ok {
			d.pos[field] = d.at(n)
		}
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // an empty value keeps the default
	}
	if v.Type() == nodeType {
		// Kept as written, for a part with its own format and strict
		// decoder (inline pipelines): no ${VAR} expansion, positions intact.
		v.Set(reflect.ValueOf(n))
		return
	}
	if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
		nd.decodeNode(d, n, field)
		return
	}
	if reflect.PointerTo(v.Type()).Implements(unmarshalerT) {
		if s, ok := d.scalar(n, field, "a "+typeName(v.Type())); ok {
			if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
				d.fail(n, field, nil, "%v", err)
			}
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), field)
	case reflect.Struct:
		d.decodeStruct(n, v, field)
	case reflect.Map:
		d.decodeMap(n, v, field)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(n, field, nil, "want a list, got %s; write [a, b] or one '- item' per line", kindName(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", field, i))
		}
		v.Set(s)
	case reflect.String:
		// On a bad variable keep the raw text, so Validate does not add
		// a second, misleading "missing" error for the same field.
		if s, ok := d.scalar(n, field, "a string"); ok || n.Kind == yaml.ScalarNode {
			v.SetString(s)
		}
	case reflect.Int, reflect.Int64:
		if s, ok := d.scalar(n, field, "an integer"); ok {
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil || v.OverflowInt(i) {
				d.fail(n, field, nil, "%q is not an integer; write a whole number such as 3", s)
				return
			}
			v.SetInt(i)
		}
	case reflect.Float64:
		if s, ok := d.scalar(n, field, "a number"); ok {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				d.fail(n, field, nil, "%q is not a number; write one such as 0.1", s)
				return
			}
			v.SetFloat(f)
		}
	case reflect.Bool:
		if s, ok := d.scalar(n, field, "true or false"); ok {
			switch strings.ToLower(s) {
			case "true":
				v.SetBool(true)
			case "false":
				v.SetBool(false)
			default:
				d.fail(n, field, nil, "%q is not a boolean; write true or false", s)
			}
		}
	default:
		panic("config: cannot decode into " + v.Type().String())
	}
}

// scalar returns n's value with variables expanded.
func (d *decoder) scalar(n *yaml.Node, field, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, field, nil, "want %s, got %s", want, kindName(n))
		return "", false
	}
	if !d.expand {
		return n.Value, true
	}
	lookup := d.lookup
	if lookup != nil && strings.Contains(n.Value, "${") {
		lookup = func(name string) (string, bool) {
			v, ok := d.lookup(name)
			if ok {
				if d.fromEnv == nil {
					d.fromEnv = map[string]bool{}
				}
				d.fromEnv[field] = true
				if d.vars == nil {
					d.vars = map[string][]varUse{}
				}
				d.vars[field] = append(d.vars[field], varUse{name: name, value: v})
			}
			return v, ok
		}
	}
	s, err := Expand(n.Value, lookup)
	if err != nil {
		d.fail(n, field, err, "%v", err)
		return n.Value, false
	}
	if s == "" && n.Value != "" {
		if d.blank == nil {
			d.blank = map[string]string{}
		}
		d.blank[field] = n.Value
	}
	return s, true
}

// varUse is a ${VAR} the environment set, and the value it gave.
type varUse struct{ name, value string }

// pair is a key and its value.
type pair struct{ k, v *yaml.Node }

// pairs returns a mapping's key/value pairs with << merge keys applied:
// explicit keys win over merged ones, earlier merges over later ones.
func (d *decoder) pairs(n *yaml.Node, field string) []pair {
	var out, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, d.mergePairs(v, field)...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(k, field, nil, "a key must be a plain string, not %s", kindName(k))
			continue
		}
		if prev := seen[k.Value]; prev != nil {
			d.fail(k, join(field, k.Value), nil, "duplicate key; it is already set at line %d, remove one", prev.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k: k, v: v})
	}
	for _, p := range merged {
		if seen[p.k.Value] == nil {
			seen[p.k.Value] = p.k
			out = append(out, p)
		}
	}
	return out
}

func (d *decoder) mergePairs(v *yaml.Node, field string) []pair {
	for v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	switch v.Kind {
	case yaml.MappingNode:
		return d.pairs(v, field)
	case yaml.SequenceNode:
		var out []pair
		for _, c := range v.Content {
			out = append(out, d.mergePairs(c, field)...)
		}
		return out
	}
	d.fail(v, field, nil, "<< must merge a mapping or a list of mappings, got %s", kindName(v))
	return nil
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, field string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, field, nil, "want a mapping of keys to values, got %s", kindName(n))
		return
	}
	fields := yamlFields(v.Type())
	for _, p := range d.pairs(n, field) {
		if strings.HasPrefix(p.k.Value, "x-") {
			continue // an extension key, as in compose files: a home for anchors
		}
		f := join(field, p.k.Value)
		i, ok := fields[p.k.Value]
		if !ok && d.lenient {
			d.warns = append(d.warns, &Error{Pos: d.at(p.k), Field: f, Msg: "unknown key ignored; skillgate has no such setting"})
			continue
		}
		if !ok {
			// Not d.fail: nothing was read wrong, so the entry's other
			// checks still hold (see hides).
			if d.unknown == nil {
				d.unknown = map[string]bool{}
			}
			d.unknown[field] = true
			hint := d.clientHint(v.Type(), p.k.Value)
			if hint == "" {
				hint = suggest(p.k.Value, slices.Sorted(maps.Keys(fields)))
			}
			d.errs = append(d.errs, &Error{Pos: d.at(p.k), Field: f, Msg: "unknown key; " + hint})
			continue
		}
		d.decode(p.v, v.Field(i), f)
	}
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, field string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, field, nil, "want a mapping of names to values, got %s", kindName(n))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, p := range d.pairs(n, field) {
		f := join(field, p.k.Value)
		if d.pos != nil {
			d.pos[f] = d.at(p.k)
		}
		e := reflect.New(v.Type().Elem()).Elem()
		d.decode(p.v, e, f)
		if e.Kind() == reflect.Pointer && e.IsNil() {
			e.Set(reflect.New(e.Type().Elem())) // "name:" with no value is an empty entry
		}
		v.SetMapIndex(reflect.ValueOf(p.k.Value), e)
		if d.order == nil {
			d.order = map[string][]string{}
		}
		d.order[field] = append(d.order[field], p.k.Value)
	}
}

// clientHint says what to do with key, unknown in a t, when an MCP
// client's config has it: the file was likely pasted from one.
func (d *decoder) clientHint(t reflect.Type, key string) string {
	file := d.file
	switch {
	case strings.HasPrefix(file, "<"):
		file = "-" // standard input
	case strings.ContainsAny(file, " '\"$`\\!&;|()<>*?#~"):
		file = "'" + strings.ReplaceAll(file, "'", `'\''`) + "'"
	}
	switch {
	case t == reflect.TypeFor[Config]() && (key == "mcpServers" || key == "inputs"):
		return fmt.Sprintf("this looks like an MCP client's config (Claude Desktop, Claude Code, Cursor, VS Code): "+
			"convert it with `skillgate import %s > skillgate.yaml` and give skillgate that file", file)
	case t == reflect.TypeFor[Server]() && key == "envFile":
		return "skillgate reads no env files; copy the variables the server needs under env: " +
			"(`skillgate import` does what it can with a client's config)"
	}
	return ""
}

// yamlFields maps yaml keys to field indexes, skipping yaml:"-" and unexported fields.
func yamlFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name != "" && name != "-" && f.Type != posType {
			m[name] = i
		}
	}
	return m
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return fmt.Sprintf("%q", n.Value)
}

func typeName(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Duration]():
		return "duration such as 10s"
	case reflect.TypeFor[Size]():
		return "size such as 4MiB"
	}
	return strings.ToLower(t.Name())
}

// suggest names the closest known key, or lists them all.
func suggest(key string, known []string) string { return suggestpkg.Hint(key, known, "known keys") }
