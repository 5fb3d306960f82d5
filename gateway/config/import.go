package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/names"
	"github.com/skillgate/skillgate/internal/redact"

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
	// editor variables and inputs, settings that mean nothing for the
	// server, servers renamed, and servers it skipped (an unknown type, no
	// command or url, or a command that runs skillgate itself).
	Warnings []*Error
	// Renamed maps the new name of each server whose name skillgate does
	// not accept (not 1-64 letters, digits, _ or -, or reserved, such as
	// tools) to the name in the file.
	Renamed map[string]string

	// file is the file's name and pos where it wrote each field of an
	// entry ("github.env.TOKEN"), by the entry's name in the file.
	file string
	pos  map[string]Pos
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
// type are errors, with file:line. A server whose name the config refuses
// is renamed (see Imported.Renamed), and what the config would refuse in
// an entry is an error naming it, so that the servers imported always
// validate once their variables are set.
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
	d := &decoder{file: name, lenient: true, pos: map[string]Pos{}}
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
	im.file, im.pos = name, d.pos
	im.rename()
	slices.SortStableFunc(im.Warnings, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return im, nil
}

// clientServer reads the entry v named by k, or returns nil, with a
// warning, for one that cannot be imported. Settings the config would
// refuse are errors naming the entry, or, when they mean nothing for the
// server (headers of a stdio server), warnings and left out: an imported
// server always validates.
func (d *decoder) clientServer(k, v *yaml.Node, vscode bool) *Server {
	name := k.Value
	warns, errs := len(d.warns), len(d.errs)
	var refs []*Error // bad ${...} references, errors unless the server is skipped
	if v.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(v.Content); j += 2 {
			switch key := v.Content[j].Value; key {
			case "command", "args", "env", "cwd", "url", "headers":
				d.clientVars(v.Content[j+1], join(name, key), vscode, &refs)
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
	if u, err := Expand(e.URL, nil); e.Command == "" && err == nil {
		if p, err := url.Parse(u); err == nil && (p.Scheme == "ws" || p.Scheme == "wss") {
			return skip(lookupKey(v, "url"), name+".url",
				"%s is a WebSocket URL; skillgate connects over stdio, http and sse only, so this server is not imported", redact.URL(u))
		}
	}
	if why := runsSkillgate(e.Command, e.Args); why != "" {
		return skip(at(v, k, "command"), name,
			"%s skillgate itself: served by the gateway, it would start the gateway again, without end, so this server is not imported "+
				"(keep it in the client's config, where it launches the gateway)", why)
	}
	d.errs = append(d.errs, refs...)
	d.clientCheck(k, v, s)
	d.clientHeaders(k, v, s)
	if len(d.errs) > errs {
		return nil
	}
	d.literalSecrets(k, v, s)
	if e.EnvFile != "" {
		d.warns = append(d.warns, &Error{Pos: d.at(lookupKey(v, "envFile")), Field: name + ".envFile",
			Msg: fmt.Sprintf("not imported: skillgate reads no env files, so the variables in %s are lost; copy the ones the server needs under env:", e.EnvFile)})
	}
	return s
}

// at returns the value of key in the entry v, or k when it has none.
func at(v, k *yaml.Node, key string) *yaml.Node {
	if n := lookupKey(v, key); n != nil {
		return n
	}
	return k
}

// modulePath is this module's import path, as `go run` names it.
const modulePath = "github.com/skillgate/skillgate"

// runsSkillgate says how command and args run skillgate (the gateway
// doing the import), or returns "": the skillgate binary (by name, or the
// very executable running), `go run` of this module or of its
// cmd/skillgate folder, or an npm runner (npx, bunx, pnpm dlx, ...) of a
// package named skillgate.
func runsSkillgate(command string, args []string) string {
	cmd, err := Expand(command, nil)
	if err != nil || cmd == "" {
		return ""
	}
	// A Windows client's path, read on any system.
	base := strings.TrimSuffix(strings.ToLower(path.Base(strings.ReplaceAll(cmd, `\`, "/"))), ".exe")
	show := strings.TrimSpace(cmd + " " + strings.Join(args, " "))
	switch {
	case base == "skillgate":
		return fmt.Sprintf("the command %q runs", show)
	case isSelf(cmd):
		return fmt.Sprintf("the command %q runs this very binary, that is,", show)
	case base == "go" && slices.Contains(args, "run"):
		for _, a := range args {
			a = strings.TrimSuffix(strings.ReplaceAll(a, `\`, "/"), "/")
			a, _, _ = strings.Cut(a, "@")
			if a == modulePath || strings.HasPrefix(a, modulePath+"/") || a == "cmd/skillgate" || strings.HasSuffix(a, "/cmd/skillgate") {
				return fmt.Sprintf("the command %q builds and runs", show)
			}
		}
	case slices.Contains([]string{"npx", "bunx", "pnpx", "pnpm", "yarn", "npm", "bun"}, base):
		for _, a := range args {
			if npmPackage(a) == "skillgate" || strings.HasPrefix(npmPackage(a), "@skillgate/") {
				return fmt.Sprintf("the command %q runs", show)
			}
		}
	}
	return ""
}

// npmPackage returns the package an npm runner's argument names, without
// its version: "@scope/name@1.2" is "@scope/name".
func npmPackage(arg string) string {
	if strings.HasPrefix(arg, "-") {
		return ""
	}
	if rest, ok := strings.CutPrefix(arg, "@"); ok {
		name, _, _ := strings.Cut(rest, "@")
		return "@" + name
	}
	name, _, _ := strings.Cut(arg, "@")
	return name
}

// isSelf reports whether cmd, a path, is the executable of this process.
func isSelf(cmd string) bool {
	if !strings.ContainsAny(cmd, `/\`) {
		return false
	}
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	a, err1 := os.Stat(cmd)
	b, err2 := os.Stat(exe)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// clientCheck refuses, as errors, the settings of s (read from the entry
// v named by k) that the config would refuse and that only the user can
// put right, and leaves out, with a warning, those that mean nothing for
// its kind of server. Values with ${VAR} are checked as far as they can be
// before the variables are set: with their defaults.
func (d *decoder) clientCheck(k, v *yaml.Node, s *Server) {
	name := k.Value
	at := func(key string) *yaml.Node {
		if n := lookupKey(v, key); n != nil {
			return n
		}
		return k
	}
	if s.Command != "" && s.URL != "" {
		d.fail(k, name, nil, "both command and url are set; keep command for a stdio server or url for a remote one, then import again")
		return
	}
	drop := func(key, format string, args ...any) {
		d.warns = append(d.warns, &Error{Pos: d.at(at(key)), Field: name + "." + key, Msg: fmt.Sprintf(format, args...)})
	}
	if s.Command != "" {
		if c, err := Expand(s.Command, nil); err == nil && flagLike(c) {
			d.fail(at("command"), name+".command", nil, "%q looks like an option, not a program; name the program to run, then import again", c)
		}
		if s.Transport == "sse" {
			d.fail(at("type"), name+".type", nil, "type sse needs a url, but this server has a command; set url, or drop type to run the command over stdio, then import again")
		}
		if len(s.Headers) > 0 {
			drop("headers", "not imported: headers are sent to url servers only, and this one runs a command")
			s.Headers = nil
		}
	} else {
		if u, err := Expand(s.URL, nil); err == nil && u != "" { // "": set at run time
			if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
				d.fail(at("url"), name+".url", nil, "%q is not an http(s) URL; write it as http://host:port/path, then import again", redact.URL(u))
			}
		}
		for key, set := range map[string]bool{"args": len(s.Args) > 0, "env": len(s.Env) > 0, "cwd": s.Cwd != ""} {
			if set {
				drop(key, "not imported: %s is for servers started with a command, and this one is reached at its url", key)
			}
		}
		s.Args, s.Env, s.Cwd = nil, nil, ""
	}
	for key := range s.Env {
		if key == "" || strings.Contains(key, "=") {
			d.fail(at("env"), name+".env", nil, "%q is not a variable name; fix it, then import again", key)
		}
	}
}

// reservedSuffix is added to a server name the gateway reserves.
const reservedSuffix = "-server"

// rename gives each server whose name skillgate refuses (not 1-64
// letters, digits, _ or -, or a namespace of the gateway's own tools) one
// it accepts, with a warning: characters it refuses become -, a reserved
// name gets -server, and a name another server has gets -2, -3 and so on.
// The new names depend on the file alone, so importing it again gives the
// same ones.
func (im *Imported) rename() {
	taken := map[string]bool{}
	for _, name := range im.Order {
		if acceptedName(name) {
			taken[name] = true
		}
	}
	for i, old := range im.Order {
		if acceptedName(old) {
			continue
		}
		var why string
		base := nameOf(old)
		switch {
		case IsReservedNamespace(old):
			why = fmt.Sprintf("%q is reserved for the gateway's own tools (%s__*)", old, old)
		case old == "":
			why = "a server needs a name"
		default:
			why = "a server name is 1-64 letters, digits, _ or -"
		}
		if IsReservedNamespace(base) {
			base += reservedSuffix
		}
		name := base
		for n := 2; taken[name]; n++ {
			suffix := "-" + strconv.Itoa(n)
			name = base[:min(len(base), names.Max-len(suffix))] + suffix
		}
		if name != base {
			why += fmt.Sprintf(", and %s is taken", base)
		}
		taken[name] = true
		s := im.Servers[old]
		delete(im.Servers, old)
		im.Servers[name] = s
		im.Order[i] = name
		if im.Renamed == nil {
			im.Renamed = map[string]string{}
		}
		im.Renamed[name] = old
		im.Warnings = append(im.Warnings, &Error{Pos: s.Pos, Field: old,
			Msg: fmt.Sprintf("renamed to %q: %s; its tools are served as %s__TOOL", name, why, name)})
	}
}

// acceptedName reports whether the config accepts name for a server.
func acceptedName(name string) bool { return names.Valid(name) && !IsReservedNamespace(name) }

// nameOf makes s a valid name: each run of characters a name cannot hold
// becomes one -, none at either end; past 64 bytes it is cut. Nothing left
// is "server".
func nameOf(s string) string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r >= 0x80 || !names.Byte(byte(r)) })
	out := strings.Join(parts, "-")
	if len(out) > names.Max {
		out = out[:names.Max]
	}
	if out == "" {
		return "server"
	}
	return out
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
// ${VAR} in n's values, and VS Code's ${input:id}, which skillgate cannot
// prompt for, to ${ID}. It warns about the variables skillgate cannot
// resolve: those inputs, an editor's ${workspaceFolder} and the like, and
// in a VS Code file (where ${VAR} means nothing) any other. A value the
// config would refuse (an editor's ${config:...}, a reference that is not
// ${NAME} or ${NAME:-default}) is added to bad.
func (d *decoder) clientVars(n *yaml.Node, field string, vscode bool, bad *[]*Error) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			d.clientVars(n.Content[i], join(field, n.Content[i-1].Value), vscode, bad)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			d.clientVars(c, fmt.Sprintf("%s[%d]", field, i), vscode, bad)
		}
	case yaml.ScalarNode:
		var editor []string // editor variables with no ${NAME} form
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
				v := inputVar(strings.TrimPrefix(body, "input:"))
				warn("VS Code input %s became ${%s}, since skillgate cannot prompt for it; set %s where the gateway runs, or write the value", ref, v, v)
				return "${" + v + "}"
			case body == "/" || strings.HasPrefix(body, "config:") || strings.HasPrefix(body, "command:"):
				editor = append(editor, ref)
			case slices.Contains(editorVars, body):
				warn("editor variable %s is kept as is, but skillgate runs outside the editor and would read it as an environment variable; replace it with the path or value it stands for", ref)
			case vscode:
				warn("VS Code variable %s is kept as is and skillgate reads it as an environment variable; replace it with a value or ${VAR}", ref)
			}
			return ref
		})
		switch _, err := Expand(n.Value, func(string) (string, bool) { return "", true }); {
		case len(editor) > 0:
			*bad = append(*bad, &Error{Pos: d.at(n), Field: field,
				Msg: fmt.Sprintf("editor variable %s has no value outside the editor; replace it with the value it stands for, then import again", editor[0])})
		case err != nil:
			*bad = append(*bad, &Error{Pos: d.at(n), Field: field, Msg: err.Error() + "; then import again"})
		}
	}
}

// inputVar is the environment variable that stands for VS Code's input id:
// perplexity-key becomes PERPLEXITY_KEY.
func inputVar(id string) string {
	b := []byte(strings.ToUpper(id))
	for i, c := range b {
		if !(c == '_' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || ('0' <= b[0] && b[0] <= '9') {
		return "INPUT_" + string(b)
	}
	return string(b)
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
