package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/names"

	"gopkg.in/yaml.v3"
)

// Imported is what Import read from an MCP client's config file.
type Imported struct {
	// Format is "mcpServers" (Claude Desktop, Claude Code, Cursor) or
	// "vscode" (VS Code's servers).
	Format string
	// Servers are the entries, keyed by name. Values are kept as written:
	// ${VAR} stays for Parse to expand, and VS Code's ${env:VAR} becomes ${VAR}.
	Servers map[string]*Server
	// Order holds the keys of Servers in file order.
	Order []string
	// Warnings are what the import left behind: unknown keys, VS Code
	// inputs and variables, names skillgate does not accept.
	Warnings []*Error
}

// clientEntry is one server entry as MCP clients write it.
type clientEntry struct {
	Command  string            `yaml:"command"`
	Args     []string          `yaml:"args"`
	Env      map[string]string `yaml:"env"`
	Cwd      string            `yaml:"cwd"`
	URL      string            `yaml:"url"`
	Headers  map[string]string `yaml:"headers"`
	Type     string            `yaml:"type"`
	Disabled bool              `yaml:"disabled"`
}

// Import reads an MCP client's config: Claude Desktop's
// claude_desktop_config.json, Claude Code's .mcp.json and Cursor's mcp.json
// (a top-level mcpServers object), or VS Code's .vscode/mcp.json (a
// top-level servers object, or mcp.servers in settings.json). Comments and
// trailing commas are accepted, as VS Code writes them. Unknown keys in an
// entry become warnings; values of the wrong type are errors, with file:line.
func Import(r io.Reader, name string) (*Imported, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", name, err)
	}
	root, err := parseJSON(stripJSONC(data), name)
	if err != nil {
		return nil, err
	}
	im := &Imported{Servers: map[string]*Server{}}
	var servers *yaml.Node
	if root.Kind == yaml.MappingNode {
		if servers = lookupKey(root, "mcpServers"); servers != nil {
			im.Format = "mcpServers"
		} else if servers = lookupKey(root, "servers"); servers != nil {
			im.Format = "vscode"
		} else if mcp := lookupKey(root, "mcp"); mcp != nil && mcp.Kind == yaml.MappingNode {
			if servers = lookupKey(mcp, "servers"); servers != nil {
				im.Format = "vscode"
			}
		}
	}
	if servers == nil {
		return nil, &Error{Pos: Pos{File: name}, Err: ErrUnknownFormat,
			Msg: "no mcpServers or servers object; expected a Claude Desktop, Claude Code, Cursor or VS Code MCP config"}
	}
	d := &decoder{file: name, lenient: true}
	known := map[string]bool{} // keys whose values are rewritten
	for k := range yamlFields(reflect.TypeFor[clientEntry]()) {
		known[k] = true
	}
	if servers.Kind != yaml.MappingNode {
		d.fail(servers, "servers", nil, "want an object of named servers, got %s", kindName(servers))
	}
	for i := 0; servers.Kind == yaml.MappingNode && i+1 < len(servers.Content); i += 2 {
		k, v := servers.Content[i], servers.Content[i+1]
		if _, dup := im.Servers[k.Value]; dup {
			d.fail(k, k.Value, nil, "duplicate server name; remove one")
			continue
		}
		if !names.Valid(k.Value) {
			d.warns = append(d.warns, &Error{Pos: d.at(k), Field: k.Value,
				Msg: "not a valid skillgate server name (1-64 letters, digits, _ or -); rename it after import"})
		}
		if im.Format == "vscode" && v.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(v.Content); j += 2 {
				if key := v.Content[j].Value; known[key] {
					d.vscodeVars(v.Content[j+1], join(k.Value, key))
				}
			}
		}
		var e clientEntry
		d.decode(v, reflect.ValueOf(&e).Elem(), k.Value)
		s := &Server{Command: e.Command, Args: e.Args, Env: e.Env, Cwd: e.Cwd, URL: e.URL,
			Headers: e.Headers, Disabled: e.Disabled, Pos: d.at(k)}
		switch e.Type {
		case "", "stdio", "http", "streamable-http", "streamableHttp":
			// Implied by command or url.
		case "sse":
			s.Transport = "sse"
		default:
			d.fail(v, k.Value+".type", nil, "unknown type %q; use stdio, http or sse", e.Type)
		}
		im.Servers[k.Value] = s
		im.Order = append(im.Order, k.Value)
	}
	if len(d.errs) > 0 {
		return nil, joinSorted(d.errs)
	}
	im.Warnings = d.warns
	slices.SortStableFunc(im.Warnings, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return im, nil
}

var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$?\$\{([^}]*)\}`) })

// vscodeVars rewrites ${env:VAR} to ${VAR} in n's values and warns about
// the VS Code variables skillgate cannot resolve, such as ${input:key}.
func (d *decoder) vscodeVars(n *yaml.Node, field string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			d.vscodeVars(n.Content[i], join(field, n.Content[i-1].Value))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			d.vscodeVars(c, fmt.Sprintf("%s[%d]", field, i))
		}
	case yaml.ScalarNode:
		n.Value = varRef().ReplaceAllStringFunc(n.Value, func(ref string) string {
			body := varRef().FindStringSubmatch(ref)[1]
			switch {
			case strings.HasPrefix(ref, "$$"):
			case strings.HasPrefix(body, "env:"):
				return "${" + strings.TrimPrefix(body, "env:") + "}"
			case strings.HasPrefix(body, "input:"):
				d.warns = append(d.warns, &Error{Pos: d.at(n), Field: field,
					Msg: fmt.Sprintf("VS Code input %s is kept as is and skillgate cannot prompt for it; replace it with ${VAR} and set VAR, or write the value", ref)})
			default:
				d.warns = append(d.warns, &Error{Pos: d.at(n), Field: field,
					Msg: fmt.Sprintf("VS Code variable %s is kept as is and skillgate reads it as an environment variable; replace it with a value or ${VAR}", ref)})
			}
			return ref
		})
	}
}

func lookupKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// stripJSONC blanks // and /* */ comments and trailing commas, keeping
// every newline so positions stay true.
func stripJSONC(b []byte) []byte {
	out := slices.Clone(b)
	blank := func(i, j int) {
		for ; i < j; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	scan := func(visit func(i int) int) {
		for i := 0; i < len(out); i++ {
			switch out[i] {
			case '"':
				for i++; i < len(out) && out[i] != '"'; i++ {
					if out[i] == '\\' {
						i++
					}
				}
			default:
				i = visit(i)
			}
		}
	}
	scan(func(i int) int {
		rest := out[i:]
		switch {
		case bytes.HasPrefix(rest, []byte("//")):
			end := bytes.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			blank(i, i+end)
			return i + end
		case bytes.HasPrefix(rest, []byte("/*")):
			end := bytes.Index(rest[2:], []byte("*/"))
			if end < 0 {
				end = len(rest)
			} else {
				end += 4
			}
			blank(i, i+end)
			return i + end - 1
		}
		return i
	})
	scan(func(i int) int {
		if out[i] == ',' {
			rest := bytes.TrimLeft(out[i+1:], " \t\r\n")
			if len(rest) > 0 && (rest[0] == '}' || rest[0] == ']') {
				out[i] = ' '
			}
		}
		return i
	})
	return out
}

// maxJSONDepth bounds nesting so a hostile file cannot exhaust the stack.
const maxJSONDepth = 200

// parseJSON turns a JSON document into a yaml.Node tree with positions,
// so imported files are walked and reported like YAML ones.
func parseJSON(data []byte, name string) (*yaml.Node, error) {
	p := &jsonParser{data: data, name: name, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	n, err := p.value(0)
	if err == nil {
		off := p.next()
		if _, err = p.dec.Token(); err == io.EOF {
			return n, nil
		} else if err == nil {
			err = p.errAt(off, "extra data after the top-level object; remove it")
		}
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return nil, p.errAt(syn.Offset, "invalid JSON: "+syn.Error())
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, p.errAt(int64(len(data)), "invalid JSON: unexpected end of file")
	}
	return nil, err
}

type jsonParser struct {
	data []byte
	name string
	dec  *json.Decoder
}

func (p *jsonParser) pos(off int64) Pos {
	off = min(max(off, 0), int64(len(p.data)))
	before := p.data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return Pos{File: p.name, Line: line, Col: col}
}

func (p *jsonParser) errAt(off int64, msg string) error {
	return &Error{Pos: p.pos(off), Msg: msg}
}

// next returns the offset where the next token starts.
func (p *jsonParser) next() int64 {
	off := p.dec.InputOffset()
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
		off++
	}
	return off
}

func (p *jsonParser) value(depth int) (*yaml.Node, error) {
	off := p.next()
	if depth > maxJSONDepth {
		return nil, p.errAt(off, fmt.Sprintf("nested deeper than %d levels", maxJSONDepth))
	}
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	at := p.pos(off)
	n := &yaml.Node{Kind: yaml.ScalarNode, Line: at.Line, Column: at.Col}
	switch t := tok.(type) {
	case json.Delim:
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
		if t == '[' {
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		}
		for p.dec.More() {
			c, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	case string:
		n.Tag, n.Value = "!!str", t
	case json.Number:
		n.Tag, n.Value = "!!int", t.String()
		if strings.ContainsAny(n.Value, ".eE") {
			n.Tag = "!!float"
		}
	case bool:
		n.Tag, n.Value = "!!bool", fmt.Sprint(t)
	case nil:
		n.Tag, n.Value = "!!null", "null"
	}
	return n, nil
}
