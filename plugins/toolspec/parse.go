package toolspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	suggestpkg "github.com/skillgate/skillgate/internal/suggest"
	"github.com/skillgate/skillgate/internal/yamldoc"

	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds a tool.yaml.
const MaxFileSize = 1 << 20

// Load reads dir/tool.yaml, validates it and checks that its entry (and the
// mounts relative to the folder) exist inside dir, following symlinks.
// Every problem is returned at once in an *Error.
func Load(dir string) (*Tool, error) { return LoadFor(dir, nil) }

// LoadFor is Load that also checks each service the tool requires against
// services, the names of the services of the config that serves it: a
// name it does not list is a problem at its place, with the nearest name.
// Nil services skips that check.
func LoadFor(dir string, services []string) (*Tool, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load tool: %w", err)
	}
	defer f.Close()
	// The files and services are checked even when the definition has
	// other problems, so that one run of validate shows them all.
	return parse(f, path, func(t *Tool, probs *problems) {
		t.checkFiles(dir, probs)
		if services != nil {
			t.checkServices(services, probs)
		}
	})
}

// Parse decodes and validates a tool.yaml read from r; filename is used in
// messages only. Files are not looked at: Load also checks that the entry
// exists inside the folder.
func Parse(r io.Reader, filename string) (*Tool, error) {
	return parse(r, filename, nil)
}

// parse decodes and validates a tool.yaml read from r, then runs more (when
// not nil) on the decoded tool, also when validation found problems: its
// problems join the others, sorted by line.
func parse(r io.Reader, filename string, more func(*Tool, *problems)) (*Tool, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filename, err)
	}
	d := &decoder{problems: problems{file: filename, pos: map[string]yaml.Node{}}}
	if len(data) > MaxFileSize {
		d.add(nil, "", "the file is larger than %d bytes; a tool.yaml holds a definition, keep data in other files", MaxFileSize)
		return nil, d.err()
	}
	if p, bad := yamldoc.UTF8(data); bad {
		d.problem(p)
		return nil, d.err()
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			d.add(nil, "", "the file is empty; write at least name, description, runtime and entry")
		} else {
			p := yamldoc.Syntax(err, data)
			p.Msg = "invalid YAML: " + p.Msg
			d.problem(p)
		}
		return nil, d.err()
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		d.add(&extra, "", "a tool.yaml holds one YAML document; remove the '---' and what follows")
	}
	// The decoder follows aliases without counting, so only a document
	// whose aliases neither loop nor bring too many values is walked.
	if probs := yamldoc.Aliases(&doc); len(probs) > 0 {
		for _, p := range probs {
			d.problem(p)
		}
		return nil, d.err()
	}
	t := &Tool{}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	d.tool(root, t)
	t.validate(&d.problems)
	if more != nil {
		more(t, &d.problems)
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return t, nil
}

// problem adds p, a problem yamldoc found.
func (p *problems) problem(yp yamldoc.Problem) {
	p.list = append(p.list, Problem{File: p.file, Line: yp.Line, Col: yp.Col, Field: yp.Field, Msg: yp.Msg})
}

// problems collects Problems; pos maps a field path to its key's node, so
// that validation of decoded values can point at the YAML.
type problems struct {
	file  string
	pos   map[string]yaml.Node
	list  []Problem
	fatal map[string]bool // fields that failed to decode: skip validating them
}

func (p *problems) add(n *yaml.Node, field, format string, args ...any) {
	pr := Problem{File: p.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		pr.Line, pr.Col = n.Line, n.Column
	}
	p.list = append(p.list, pr)
}

// at reports a problem with a decoded field, at the position it was written.
func (p *problems) at(field, format string, args ...any) {
	for _, f := range []string{field, parentField(field)} {
		if p.fatal[f] {
			return
		}
	}
	var n *yaml.Node
	if v, ok := p.pos[field]; ok {
		n = &v
	} else if v, ok := p.pos[parentField(field)]; ok {
		n = &v
	}
	p.add(n, field, format, args...)
}

func parentField(f string) string {
	if i := strings.LastIndexAny(f, ".["); i > 0 {
		return f[:i]
	}
	return ""
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	sort.SliceStable(p.list, func(i, j int) bool {
		a, b := p.list[i], p.list[j]
		if (a.Line == 0) != (b.Line == 0) {
			return b.Line == 0 // problems without a position last
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return &Error{Problems: p.list}
}

// decoder walks a tool.yaml's nodes strictly. It follows aliases without
// counting: parse walks only documents yamldoc.Aliases passed.
type decoder struct {
	problems
}

func (d *decoder) fail(n *yaml.Node, field, format string, args ...any) {
	if d.fatal == nil {
		d.fatal = map[string]bool{}
	}
	d.fatal[field] = true
	d.add(n, field, format, args...)
}

// resolve follows aliases; it returns nil when it cannot.
func (d *decoder) resolve(n *yaml.Node, field string) *yaml.Node {
	for depth := 0; n.Kind == yaml.AliasNode; depth++ {
		if depth > 100 || n.Alias == nil {
			d.fail(n, field, "alias *%s cannot be resolved", n.Value)
			return nil
		}
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		case "!!int", "!!float":
			return "a number (" + n.Value + ")"
		}
		return fmt.Sprintf("the text %q", n.Value)
	}
	return "something else"
}

// mapping walks a mapping node, calling set for each known key and
// reporting unknown and duplicate keys.
func (d *decoder) mapping(n *yaml.Node, field string, keys map[string]func(v *yaml.Node, f string)) {
	if n = d.resolve(n, field); n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		if !isNull(n) {
			d.fail(n, field, "want a mapping of keys to values, got %s", kindName(n))
		}
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.add(k, field, "keys must be plain words")
			continue
		}
		f := k.Value
		if field != "" {
			f = field + "." + k.Value
		}
		if k.Value == "<<" {
			d.add(k, field, "merge keys (<<) are not supported in a tool.yaml; write the keys out")
			continue
		}
		set, ok := keys[k.Value]
		if !ok {
			d.add(k, field, "unknown key %q%s", k.Value, suggest(k.Value, keys))
			continue
		}
		if seen[k.Value] {
			d.add(k, f, "written twice; keep one")
			continue
		}
		seen[k.Value] = true
		d.pos[f] = *k
		set(v, f)
	}
}

// suggest returns ` (did you mean "x"?)` for a near miss, or the list of
// known keys.
func suggest(key string, keys map[string]func(*yaml.Node, string)) string {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	if near, ok := suggestpkg.Closest(key, names); ok {
		return fmt.Sprintf(" (did you mean %q?)", near)
	}
	return "; known keys: " + strings.Join(names, ", ")
}

func (d *decoder) str(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		if n = d.resolve(n, f); n == nil || isNull(n) {
			return
		}
		if n.Kind != yaml.ScalarNode {
			d.fail(n, f, "want text, got %s", kindName(n))
			return
		}
		*dst = n.Value
	}
}

func (d *decoder) boolean(dst *bool) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		if n = d.resolve(n, f); n == nil || isNull(n) {
			return
		}
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			d.fail(n, f, "want true or false, got %s", kindName(n))
			return
		}
		*dst = n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
	}
}

func (d *decoder) boolPtr(dst **bool) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		var b bool
		d.boolean(&b)(n, f)
		if !d.fatal[f] && !isNull(n) {
			*dst = &b
		}
	}
}

func (d *decoder) integer(dst *int) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		if n = d.resolve(n, f); n == nil || isNull(n) {
			return
		}
		var v int
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil || v < 0 {
			d.fail(n, f, "want a whole number of 0 or more, got %s", kindName(n))
			return
		}
		*dst = v
	}
}

func (d *decoder) duration(dst *Duration) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		if n = d.resolve(n, f); n == nil || isNull(n) {
			return
		}
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			hint := ""
			if n.ShortTag() == "!!int" {
				hint = fmt.Sprintf("; add a unit: %ss", n.Value)
			}
			d.fail(n, f, "want a duration like \"30s\" or \"2m\", got %s%s", kindName(n), hint)
			return
		}
		v, err := parseDuration(n.Value)
		if err != nil {
			d.fail(n, f, "%v", err)
			return
		}
		*dst = v
	}
}

func (d *decoder) size(dst *ByteSize) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		if n = d.resolve(n, f); n == nil || isNull(n) {
			return
		}
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && n.ShortTag() != "!!int") {
			d.fail(n, f, "want a size like 65536 or \"64MiB\", got %s", kindName(n))
			return
		}
		v, err := parseByteSize(n.Value)
		if err != nil {
			d.fail(n, f, "%v", err)
			return
		}
		*dst = v
	}
}

func (d *decoder) strings(dst *[]string) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		if n = d.resolve(n, f); n == nil || isNull(n) {
			return
		}
		if n.Kind != yaml.SequenceNode {
			d.fail(n, f, "want a list, got %s; write [a, b] or one '- item' per line", kindName(n))
			return
		}
		out := make([]string, 0, len(n.Content))
		for i, c := range n.Content {
			ef := fmt.Sprintf("%s[%d]", f, i)
			if c = d.resolve(c, ef); c == nil {
				return
			}
			if c.Kind != yaml.ScalarNode || isNull(c) {
				d.fail(c, ef, "want text, got %s", kindName(c))
				continue
			}
			out = append(out, c.Value)
		}
		*dst = out
	}
}

func (d *decoder) stringMap(dst *map[string]string) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		if n = d.resolve(n, f); n == nil || isNull(n) {
			return
		}
		if n.Kind != yaml.MappingNode {
			d.fail(n, f, "want a mapping of names to values, got %s", kindName(n))
			return
		}
		m := map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], d.resolve(n.Content[i+1], f)
			if v == nil {
				return
			}
			if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
				d.fail(k, f+"."+k.Value, "want NAME: value")
				continue
			}
			if _, dup := m[k.Value]; dup {
				d.add(k, f+"."+k.Value, "written twice; keep one")
			}
			m[k.Value] = v.Value
		}
		*dst = m
	}
}

// schema converts a YAML mapping to JSON.
func (d *decoder) schema(dst *json.RawMessage) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		if n = d.resolve(n, f); n == nil || isNull(n) {
			return
		}
		if n.Kind != yaml.MappingNode {
			d.fail(n, f, "want a JSON Schema object (a mapping such as {type: object}), got %s", kindName(n))
			return
		}
		v, ok := d.value(n, f)
		if !ok {
			return
		}
		d.schemaTypes(n, f)
		b, err := json.Marshal(v)
		if err != nil {
			d.fail(n, f, "cannot be written as JSON: %v", err)
			return
		}
		*dst = b
	}
}

// jsonTypes are the types JSON Schema knows.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// schemaTypes checks every `type:` of the JSON Schema at n: a name JSON
// Schema does not know ("strng") would be served as it is, and clients
// and argument checks would each make something different of it. A
// mapping under a `type` key is a property named type, not a keyword, and
// values (default, const, enum, examples) are data.
func (d *decoder) schemaTypes(n *yaml.Node, f string) {
	if n = d.resolve(n, f); n == nil {
		return
	}
	check := func(t *yaml.Node, field string) {
		if t.Kind != yaml.ScalarNode || slices.Contains(jsonTypes, t.Value) {
			return
		}
		hint := "the types are " + strings.Join(jsonTypes, ", ")
		if near, ok := suggestpkg.Closest(t.Value, jsonTypes); ok {
			hint = fmt.Sprintf("did you mean %q?", near)
		}
		d.fail(t, field, "%q is not a JSON Schema type; %s", t.Value, hint)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], d.resolve(n.Content[i+1], f)
			if v == nil {
				return
			}
			field := f + "." + k.Value
			switch k.Value {
			case "default", "const", "enum", "examples", "example":
				continue // values, where a "type" key is data
			}
			if k.Value == "type" && v.Kind == yaml.ScalarNode {
				check(v, field)
				continue
			}
			if k.Value == "type" && v.Kind == yaml.SequenceNode {
				for j, t := range v.Content {
					check(t, fmt.Sprintf("%s[%d]", field, j))
				}
				continue
			}
			d.schemaTypes(v, field)
		}
	case yaml.SequenceNode:
		for j, c := range n.Content {
			d.schemaTypes(c, fmt.Sprintf("%s[%d]", f, j))
		}
	}
}

// value converts a YAML node to a JSON-able value.
func (d *decoder) value(n *yaml.Node, f string) (any, bool) {
	if n = d.resolve(n, f); n == nil {
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := d.resolve(n.Content[i], f)
			if k == nil {
				return nil, false
			}
			if k.Kind != yaml.ScalarNode || k.Value == "<<" {
				d.fail(k, f, "JSON object keys must be text")
				return nil, false
			}
			if _, dup := m[k.Value]; dup {
				d.fail(k, f, "key %q written twice; keep one", k.Value)
				return nil, false
			}
			v, ok := d.value(n.Content[i+1], f)
			if !ok {
				return nil, false
			}
			m[k.Value] = v
		}
		return m, true
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, ok := d.value(c, f)
			if !ok {
				return nil, false
			}
			s = append(s, v)
		}
		return s, true
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, true
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				d.fail(n, f, "%v", err)
				return nil, false
			}
			return b, true
		case "!!int":
			if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				return i, true
			}
			var v float64
			if err := n.Decode(&v); err == nil {
				return v, true
			}
		case "!!float":
			var v float64
			if err := n.Decode(&v); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
				return v, true
			}
			d.fail(n, f, "%s is not a JSON number", n.Value)
			return nil, false
		case "!!str":
			return n.Value, true
		}
		d.fail(n, f, "%s (%s) has no JSON form; quote it", n.Value, n.ShortTag())
		return nil, false
	}
	d.fail(n, f, "has no JSON form")
	return nil, false
}

func (d *decoder) tool(n *yaml.Node, t *Tool) {
	if n = d.resolve(n, ""); n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, "", "a tool.yaml is a mapping of keys (name, description, runtime, entry, ...), got %s", kindName(n))
		return
	}
	d.mapping(n, "", map[string]func(*yaml.Node, string){
		"name":          d.str(&t.Name),
		"title":         d.str(&t.Title),
		"description":   d.str(&t.Description),
		"version":       d.str(&t.Version),
		"input_schema":  d.schema(&t.InputSchema),
		"output_schema": d.schema(&t.OutputSchema),
		"runtime":       d.str(&t.Runtime),
		"entry":         d.str(&t.Entry),
		"args":          d.strings(&t.Args),
		"protocol":      d.str(&t.Protocol),
		"mode":          d.str(&t.Mode),
		"timeout":       d.duration(&t.Timeout),
		"stall_timeout": d.duration(&t.StallTimeout),
		"env":           d.strings(&t.Env),
		"secrets":       d.strings(&t.Secrets),
		"requires":      d.strings(&t.Requires),
		"annotations": func(n *yaml.Node, f string) {
			a := &Annotations{}
			d.mapping(n, f, map[string]func(*yaml.Node, string){
				"title":           d.str(&a.Title),
				"readOnlyHint":    d.boolPtr(&a.ReadOnlyHint),
				"destructiveHint": d.boolPtr(&a.DestructiveHint),
				"idempotentHint":  d.boolPtr(&a.IdempotentHint),
				"openWorldHint":   d.boolPtr(&a.OpenWorldHint),
			})
			if *a != (Annotations{}) {
				t.Annotations = a
			}
		},
		"sandbox": func(n *yaml.Node, f string) {
			d.mapping(n, f, map[string]func(*yaml.Node, string){
				"enabled": d.boolean(&t.Sandbox.Enabled),
				"network": d.boolean(&t.Sandbox.Network),
				"mounts":  d.mounts(&t.Sandbox.Mounts),
			})
		},
		"ulimits": func(n *yaml.Node, f string) {
			u := &t.Ulimits
			d.mapping(n, f, map[string]func(*yaml.Node, string){
				"memory":     d.size(&u.Memory),
				"processes":  d.integer(&u.Processes),
				"open_files": d.integer(&u.OpenFiles),
				"cpu":        d.duration(&u.CPU),
				"file_size":  d.size(&u.FileSize),
			})
		},
		"dependencies": func(n *yaml.Node, f string) {
			d.mapping(n, f, map[string]func(*yaml.Node, string){
				"pip": d.strings(&t.Dependencies.Pip),
				"npm": d.strings(&t.Dependencies.Npm),
			})
		},
		"wasm": func(n *yaml.Node, f string) {
			w := &Wasm{}
			d.mapping(n, f, map[string]func(*yaml.Node, string){
				"style":        d.str(&w.Style),
				"function":     d.str(&w.Function),
				"memory_limit": d.size(&w.MemoryLimit),
				"mounts":       d.mounts(&w.Mounts),
				"env":          d.stringMap(&w.Env),
			})
			t.Wasm = w
		},
	})
}

// mounts decodes a list whose items are a path or {path, at}.
func (d *decoder) mounts(dst *[]Mount) func(*yaml.Node, string) {
	return func(n *yaml.Node, f string) {
		if n = d.resolve(n, f); n == nil || isNull(n) {
			return
		}
		if n.Kind != yaml.SequenceNode {
			d.fail(n, f, "want a list of paths or {path, at} mappings, got %s", kindName(n))
			return
		}
		for i, c := range n.Content {
			ef := fmt.Sprintf("%s[%d]", f, i)
			if c = d.resolve(c, ef); c == nil {
				return
			}
			var m Mount
			if c.Kind == yaml.ScalarNode && !isNull(c) {
				m.Path = c.Value
				d.pos[ef+".path"] = *c
			} else {
				d.mapping(c, ef, map[string]func(*yaml.Node, string){
					"path": d.str(&m.Path),
					"at":   d.str(&m.At),
				})
			}
			*dst = append(*dst, m)
		}
	}
}
