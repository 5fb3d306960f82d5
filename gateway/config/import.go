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
	// "vscode" (VS Code's servers): the first of them when a file has both,
	// whose servers are all read.
	Format string
	// Servers are the entries, keyed by name. Values are kept as written:
	// ${VAR} stays for Parse to expand, and ${env:VAR} (VS Code, Cursor)
	// becomes ${VAR}.
	Servers map[string]*Server
	// Order holds the keys of Servers in file order.
	Order []string
	// Warnings are what the import left behind: unknown keys, env files,
	// editor variables and inputs, names skillgate does not accept, and
	// servers it skipped (an unknown type, no command or url).
	Warnings []*Error
}

// clientEntry is one server entry as MCP clients write it.
type clientEntry struct {
	Command  string            `yaml:"command"`
	Args     []string          `yaml:"args"`
	Env      map[string]string `yaml:"env"`
	EnvFile  string            `yaml:"envFile"`
	Cwd      string            `yaml:"cwd"`
	URL      string            `yaml:"url"`
	Headers  map[string]string `yaml:"headers"`
	Type     string            `yaml:"type"`
	Disabled bool              `yaml:"disabled"`
}

// serverBlock is an object of named servers in a client's file.
type serverBlock struct {
	key    string // as written: mcpServers, servers or mcp.servers
	format string
	node   *yaml.Node
}

// Import reads an MCP client's config: Claude Desktop's
// claude_desktop_config.json, Claude Code's .mcp.json and Cursor's mcp.json
// (a top-level mcpServers object), or VS Code's .vscode/mcp.json (a
// top-level servers object, or mcp.servers in settings.json); a file with
// both mcpServers and servers gives the servers of both. Comments and
// trailing commas are accepted, as VS Code writes them. Unknown keys in an
// entry become warnings, and so does a server skipped; values of the wrong
// type are errors, with file:line.
func Import(r io.Reader, name string) (*Imported, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", name, err)
	}
	root, err := parseJSON(stripJSONC(data), name)
	if err != nil {
		return nil, err
	}
	var blocks []serverBlock
	if root.Kind == yaml.MappingNode {
		if n := lookupKey(root, "mcpServers"); n != nil {
			blocks = append(blocks, serverBlock{"mcpServers", "mcpServers", n})
		}
		if n := lookupKey(root, "servers"); n != nil {
			blocks = append(blocks, serverBlock{"servers", "vscode", n})
		}
		if mcp := lookupKey(root, "mcp"); len(blocks) == 0 && mcp != nil && mcp.Kind == yaml.MappingNode {
			if n := lookupKey(mcp, "servers"); n != nil {
				blocks = append(blocks, serverBlock{"mcp.servers", "vscode", n})
			}
		}
	}
	if len(blocks) == 0 {
		return nil, &Error{Pos: Pos{File: name}, Err: ErrUnknownFormat,
			Msg: "no mcpServers or servers object; expected a Claude Desktop, Claude Code, Cursor or VS Code MCP config"}
	}
	im := &Imported{Format: blocks[0].format, Servers: map[string]*Server{}}
	d := &decoder{file: name, lenient: true}
	for i, b := range blocks {
		if b.node.Kind != yaml.MappingNode {
			if i == 0 {
				d.fail(b.node, b.key, nil, "want an object of named servers, got %s", kindName(b.node))
			} else {
				d.warns = append(d.warns, &Error{Pos: d.at(b.node), Field: b.key,
					Msg: fmt.Sprintf("not an object of named servers but %s; not imported", kindName(b.node))})
			}
			continue
		}
		seen := map[string]bool{}
		for j := 0; j+1 < len(b.node.Content); j += 2 {
			k, v := b.node.Content[j], b.node.Content[j+1]
			if seen[k.Value] {
				d.fail(k, k.Value, nil, "duplicate server name; remove one")
				continue
			}
			seen[k.Value] = true
			if prev, dup := im.Servers[k.Value]; dup {
				d.warns = append(d.warns, &Error{Pos: d.at(k), Field: k.Value,
					Msg: fmt.Sprintf("also defined under %s at line %d; this one is not imported", blocks[0].key, prev.Pos.Line)})
				continue
			}
			if s := d.clientServer(k, v, b.format == "vscode"); s != nil {
				im.Servers[k.Value] = s
				im.Order = append(im.Order, k.Value)
			}
		}
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

// clientServer reads the entry v named by k, or returns nil, with a
// warning, for one that cannot be imported.
func (d *decoder) clientServer(k, v *yaml.Node, vscode bool) *Server {
	name := k.Value
	warns, errs := len(d.warns), len(d.errs)
	if v.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(v.Content); j += 2 {
			switch key := v.Content[j].Value; key {
			case "command", "args", "env", "cwd", "url", "headers":
				d.clientVars(v.Content[j+1], join(name, key), vscode)
			}
		}
	}
	var e clientEntry
	d.decode(v, reflect.ValueOf(&e).Elem(), name)
	if len(d.errs) > errs {
		return nil
	}
	skip := func(n *yaml.Node, field, format string, args ...any) *Server {
		// What else it warned about is moot.
		d.warns = append(d.warns[:warns], &Error{Pos: d.at(n), Field: field, Msg: fmt.Sprintf(format, args...)})
		return nil
	}
	s := &Server{Command: e.Command, Args: e.Args, Env: e.Env, Cwd: e.Cwd, URL: e.URL,
		Headers: e.Headers, Disabled: e.Disabled, Pos: d.at(k)}
	switch e.Type {
	case "", "stdio", "http", "streamable-http", "streamableHttp":
		// Implied by command or url.
	case "sse":
		s.Transport = "sse"
	default:
		return skip(lookupKey(v, "type"), name+".type",
			"unknown type %q; skillgate connects over stdio, http and sse only, so this server is not imported", e.Type)
	}
	if e.Command == "" && e.URL == "" {
		return skip(k, name, "neither command nor url is set, so there is nothing to start or reach; this server is not imported")
	}
	if e.EnvFile != "" {
		d.warns = append(d.warns, &Error{Pos: d.at(lookupKey(v, "envFile")), Field: name + ".envFile",
			Msg: fmt.Sprintf("not imported: skillgate reads no env files, so the variables in %s are lost; copy the ones the server needs under env:", e.EnvFile)})
	}
	if !names.Valid(name) {
		d.warns = append(d.warns, &Error{Pos: d.at(k), Field: name,
			Msg: "not a valid skillgate server name (1-64 letters, digits, _ or -); rename it after import"})
	}
	return s
}

var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$?\$\{([^}]*)\}`) })

// editorVars are the variables VS Code and Cursor substitute from what the
// editor has open; skillgate runs outside any editor.
var editorVars = []string{
	"workspaceFolder", "workspaceFolderBasename", "userHome", "cwd", "execPath", "pathSeparator", "/",
	"file", "fileWorkspaceFolder", "relativeFile", "relativeFileDirname", "fileBasename",
	"fileBasenameNoExtension", "fileExtname", "fileDirname", "fileDirnameBasename",
	"lineNumber", "selectedText", "defaultBuildTask",
}

// clientVars rewrites ${env:VAR}, as VS Code and Cursor write it, to
// ${VAR} in n's values, and warns about the variables skillgate cannot
// resolve: VS Code's ${input:key}, an editor's ${workspaceFolder} and the
// like, and in a VS Code file (where ${VAR} means nothing) any other.
func (d *decoder) clientVars(n *yaml.Node, field string, vscode bool) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			d.clientVars(n.Content[i], join(field, n.Content[i-1].Value), vscode)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			d.clientVars(c, fmt.Sprintf("%s[%d]", field, i), vscode)
		}
	case yaml.ScalarNode:
		n.Value = varRef().ReplaceAllStringFunc(n.Value, func(ref string) string {
			body := varRef().FindStringSubmatch(ref)[1]
			warn := func(format string, args ...any) {
				d.warns = append(d.warns, &Error{Pos: d.at(n), Field: field, Msg: fmt.Sprintf(format, args...)})
			}
			switch {
			case strings.HasPrefix(ref, "$$"):
			case strings.HasPrefix(body, "env:"):
				return "${" + strings.TrimPrefix(body, "env:") + "}"
			case strings.HasPrefix(body, "input:"):
				warn("VS Code input %s is kept as is and skillgate cannot prompt for it; replace it with ${VAR} and set VAR, or write the value", ref)
			case slices.Contains(editorVars, body) || strings.HasPrefix(body, "config:") || strings.HasPrefix(body, "command:"):
				warn("editor variable %s is kept as is, but skillgate runs outside the editor and would read it as an environment variable; replace it with the path or value it stands for", ref)
			case vscode:
				warn("VS Code variable %s is kept as is and skillgate reads it as an environment variable; replace it with a value or ${VAR}", ref)
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
