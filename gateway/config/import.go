package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
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
	// Notes say what the import did that the user should know, though
	// nothing is wrong: where a project's servers came from and the folder
	// they run in, the editor variables it replaced.
	Notes []string
	// Renamed maps the new name of each server whose name skillgate does
	// not accept (not 1-64 letters, digits, _ or -, or reserved, such as
	// tools) to the name in the file; and the name of each server of a
	// project in Claude Code's ~/.claude.json to where the file writes
	// it: projects[DIR].NAME.
	Renamed map[string]string

	// file is the file's name and pos where it wrote each field of an
	// entry ("github.env.TOKEN"), by the entry's name in the file.
	file string
	pos  map[string]Pos
	// project is the folder of each server of a project in
	// ~/.claude.json, and inFile its name there, by its key in Servers
	// before rename.
	project, inFile map[string]string
	// kept are the editor variables left as they are, with a warning.
	kept map[string]bool
}

// ImportOptions say where the file Import reads is, for what depends on it.
type ImportOptions struct {
	// Path is the file's path; "" when it has none (standard input). A
	// project's file, Claude Code's .mcp.json, VS Code's .vscode/mcp.json
	// (or .vscode/settings.json) and Cursor's .cursor/mcp.json, has its
	// stdio servers run in the project folder, as the client runs them:
	// each gets cwd: that folder, and ${workspaceFolder} stands for it.
	Path string
	// Project picks, in Claude Code's ~/.claude.json, the one project whose
	// servers are imported with the user's; "" imports every project's.
	Project string
}

// clientEntry is one server entry as MCP clients write it.
type clientEntry struct {
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	EnvFile string            `yaml:"envFile"`
	Cwd     string            `yaml:"cwd"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	Type    string            `yaml:"type"`
	// Transport is how some clients (and skillgate) spell type.
	Transport string `yaml:"transport"`
	// Auth (Cursor) and OAuth are an OAuth client's settings.
	Auth     *yaml.Node `yaml:"auth"`
	OAuth    *yaml.Node `yaml:"oauth"`
	Disabled bool       `yaml:"disabled"`
}

// serverBlock is an object of named servers in a client's file.
type serverBlock struct {
	key    string // as written: mcpServers, servers or mcp.servers
	format string
	node   *yaml.Node
	// dir is the folder its stdio servers run in, "" for the one
	// whoever runs the gateway is in; project says it is that of a
	// project in ~/.claude.json, whose servers are keyed projects[DIR].NAME.
	dir     string
	project bool
}

// source is what the entries of a file are read with.
type source struct {
	vscode bool
	// workspace is the project folder, "" when unknown.
	workspace string
	// inputs are the defaults of VS Code's inputs, by id.
	inputs map[string]string
	// replaced are the editor variables replaced, with what; kept those
	// left as they are.
	replaced map[string]bool // by note
	kept     map[string]bool
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
// validate once their variables are set. A ${...} skillgate cannot expand
// is written $${...}, which it passes on as it is, with a warning.
func Import(r io.Reader, name string) (*Imported, error) {
	return ImportWith(r, name, ImportOptions{})
}

// ImportWith is Import, told where the file is: see ImportOptions. The
// servers of the projects in Claude Code's ~/.claude.json (under
// projects, where `claude mcp add` puts them) are imported too, keeping
// their names unless another server has it: then the project folder's
// name is added (db-app).
func ImportWith(r io.Reader, name string, opts ImportOptions) (*Imported, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", name, err)
	}
	root, err := parseJSON(stripJSONC(data), name)
	if err != nil {
		return nil, err
	}
	var blocks []serverBlock
	var notes []string
	dir := projectDir(opts.Path)
	src := &source{workspace: dir, inputs: map[string]string{}, replaced: map[string]bool{}, kept: map[string]bool{}}
	if root.Kind == yaml.MappingNode {
		if n := lookupKey(root, "mcpServers"); n != nil {
			blocks = append(blocks, serverBlock{key: "mcpServers", format: "mcpServers", node: n})
		}
		if n := lookupKey(root, "servers"); n != nil {
			blocks = append(blocks, serverBlock{key: "servers", format: "vscode", node: n})
		}
		inputs := lookupKey(root, "inputs")
		if mcp := lookupKey(root, "mcp"); len(blocks) == 0 && mcp != nil && mcp.Kind == yaml.MappingNode {
			if n := lookupKey(mcp, "servers"); n != nil {
				blocks = append(blocks, serverBlock{key: "mcp.servers", format: "vscode", node: n})
				inputs = lookupKey(mcp, "inputs")
			}
		}
		inputDefaults(inputs, src.inputs)
		for i := range blocks {
			blocks[i].dir = dir
		}
		var err error
		var projects []serverBlock
		if projects, notes, err = claudeProjects(root, name, opts.Project); err != nil {
			return nil, err
		}
		blocks = append(blocks, projects...)
	}
	if len(blocks) == 0 {
		return nil, &Error{Pos: Pos{File: name}, Err: ErrUnknownFormat,
			Msg: "no mcpServers or servers object; expected a Claude Desktop, Claude Code, Cursor or VS Code MCP config"}
	}
	im := &Imported{Format: blocks[0].format, Servers: map[string]*Server{},
		project: map[string]string{}, inFile: map[string]string{}, kept: src.kept}
	d := &decoder{file: name, lenient: true, pos: map[string]Pos{}}
	for i, b := range blocks {
		src.vscode = b.format == "vscode"
		src.workspace = b.dir
		var ran []string // the servers given cwd: b.dir
		if b.node.Kind != yaml.MappingNode {
			if i == 0 {
				d.fail(b.node, b.key, nil, "want an object of named servers, got %s", kindName(b.node))
			} else {
				d.warns = append(d.warns, &Error{Pos: d.at(b.node), Field: b.key,
					Msg: fmt.Sprintf("not an object of named servers but %s; not imported", kindName(b.node))})
			}
			continue
		}
		if b.project && (!filepath.IsAbs(b.dir) || slices.Contains(strings.Split(filepath.ToSlash(b.dir), "/"), "..")) {
			d.warns = append(d.warns, &Error{Pos: d.at(b.node), Field: b.key,
				Msg: fmt.Sprintf("the project folder %q is not an absolute path without ..; its servers get it as cwd, where a relative path is resolved "+
					"against the skillgate config's folder: check that it is the folder meant, or write an absolute one", b.dir)})
		}
		seen := map[string]bool{}
		for j := 0; j+1 < len(b.node.Content); j += 2 {
			k, v := b.node.Content[j], b.node.Content[j+1]
			if seen[k.Value] {
				d.fail(k, k.Value, nil, "duplicate server name; remove one")
				continue
			}
			seen[k.Value] = true
			key := k
			if b.project {
				key = &yaml.Node{Kind: k.Kind, Value: fmt.Sprintf("projects[%s].%s", b.dir, k.Value), Line: k.Line, Column: k.Column}
			} else if prev, dup := im.Servers[k.Value]; dup {
				d.warns = append(d.warns, &Error{Pos: d.at(k), Field: k.Value,
					Msg: fmt.Sprintf("also defined under %s at line %d; this one is not imported", blocks[0].key, prev.Pos.Line)})
				continue
			}
			s := d.clientServer(key, v, src)
			if s == nil {
				continue
			}
			if b.dir != "" && s.Command != "" {
				switch {
				case s.Cwd == "":
					s.Cwd = escapePath(b.dir)
					ran = append(ran, k.Value)
				case !filepath.IsAbs(s.Cwd) && !strings.HasPrefix(s.Cwd, "$"):
					s.Cwd = filepath.Join(escapePath(b.dir), s.Cwd) // the client's is the project's, not skillgate.yaml's
				}
			}
			im.Servers[key.Value] = s
			im.Order = append(im.Order, key.Value)
			if b.project {
				im.project[key.Value], im.inFile[key.Value] = b.dir, k.Value
			}
		}
		if len(ran) > 0 && !b.project {
			notes = append(notes, fmt.Sprintf("%s is a project's file: its stdio servers run in the project folder, so %s got cwd: %s",
				name, strings.Join(ran, ", "), b.dir))
		}
	}
	if len(d.errs) > 0 {
		return nil, joinSorted(d.errs)
	}
	im.Warnings = d.warns
	im.file, im.pos = name, d.pos
	im.Notes = append(notes, im.rename()...)
	im.Notes = append(im.Notes, slices.Sorted(maps.Keys(src.replaced))...)
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
func (d *decoder) clientServer(k, v *yaml.Node, src *source) *Server {
	name := k.Value
	warns, errs := len(d.warns), len(d.errs)
	var refs []*Error // bad ${...} references, errors unless the server is skipped
	if v.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(v.Content); j += 2 {
			switch key := v.Content[j].Value; key {
			case "command", "args", "env", "cwd", "url", "headers":
				d.clientVars(v.Content[j+1], join(name, key), src, &refs)
			}
		}
	}
	for _, key := range []string{"command", "url", "cwd", "type", "transport"} {
		// A number or true where a string belongs is a mistake the
		// client refuses too, not a value to pass on as text.
		if n := lookupKey(v, key); n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!str" && n.Tag != "!!null" {
			d.fail(n, join(name, key), nil, "want a string, got %s %s; write it in quotes if it is meant, then import again",
				strings.TrimPrefix(n.Tag, "!!"), n.Value)
		}
	}
	var e clientEntry
	d.decode(v, reflect.ValueOf(&e).Elem(), name)
	if len(d.errs) > errs {
		return nil
	}
	typeKey := "type"
	if e.Type == "" && e.Transport != "" {
		e.Type, typeKey = e.Transport, "transport"
	}
	skip := func(n *yaml.Node, field, format string, args ...any) *Server {
		// What else it warned about is moot.
		d.warns = append(d.warns[:warns], &Error{Pos: d.at(n), Field: field, Msg: fmt.Sprintf(format, args...)})
		return nil
	}
	s := &Server{Command: e.Command, Args: e.Args, Env: e.Env, Cwd: e.Cwd, URL: e.URL,
		Headers: e.Headers, Disabled: e.Disabled, Pos: d.at(k)}
	switch e.Type {
	case "", "stdio", "http", "streamable-http", "streamableHttp", "streamable_http":
		// Implied by command or url.
	case "sse":
		s.Transport = "sse"
	default:
		return skip(lookupKey(v, typeKey), name+"."+typeKey,
			"unknown %s %q; skillgate connects over stdio, http and sse only, so this server is not imported", typeKey, e.Type)
	}
	switch {
	case e.Type == "stdio" && e.Command == "" && e.URL != "":
		d.warns = append(d.warns, &Error{Pos: d.at(lookupKey(v, typeKey)), Field: name + "." + typeKey,
			Msg: fmt.Sprintf("%s stdio, but only url is set: imported as a remote server at its url (streamable HTTP, falling back to SSE); check that this is the server meant", typeKey)})
	case e.Type != "" && e.Type != "stdio" && e.Type != "sse" && e.Command != "" && e.URL == "":
		d.warns = append(d.warns, &Error{Pos: d.at(lookupKey(v, typeKey)), Field: name + "." + typeKey,
			Msg: fmt.Sprintf("%s %s, but only command is set: imported as a stdio server that runs the command; check that this is the server meant", typeKey, e.Type)})
	}
	if e.Auth != nil || e.OAuth != nil {
		key := "auth"
		if e.Auth == nil {
			key = "oauth"
		}
		d.warns = append(d.warns, &Error{Pos: d.at(lookupKey(v, key)), Field: name + "." + key,
			Msg: fmt.Sprintf("not imported: skillgate cannot sign in to a server with OAuth; get a token for it and send it in a header: "+
				"headers: {Authorization: \"Bearer ${%s}\"}, setting %s where the gateway runs", inputVar(shortName(k.Value)+"_token"), inputVar(shortName(k.Value)+"_token"))})
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
// A server of a project in ~/.claude.json keeps its name when no other
// has it, else gets the project folder's name added (db-app), and it
// returns notes saying which servers came from which project. The new
// names depend on the file alone, so importing it again gives the same
// ones.
func (im *Imported) rename() []string {
	taken := map[string]bool{}
	for _, name := range im.Order {
		if im.project[name] == "" && acceptedName(name) {
			taken[name] = true
		}
	}
	var notes []string
	var dirs []string
	from := map[string][]string{} // the names given to each project's servers
	for i, old := range im.Order {
		dir := im.project[old]
		if dir == "" && acceptedName(old) {
			continue
		}
		orig := old
		if dir != "" {
			orig = im.inFile[old]
		}
		var why []string
		base := nameOf(orig)
		switch {
		case IsReservedNamespace(orig):
			why = append(why, fmt.Sprintf("%q is reserved for the gateway's own tools (%s__*)", orig, orig))
		case orig == "":
			why = append(why, "a server needs a name")
		case !acceptedName(orig):
			why = append(why, "a server name is 1-64 letters, digits, _ or -")
		}
		if IsReservedNamespace(base) {
			base += reservedSuffix
		}
		if dir != "" && taken[base] {
			why = append(why, base+" is taken")
			suffix := "-" + nameOf(filepath.Base(dir))
			base = base[:min(len(base), names.Max-len(suffix))] + suffix
		}
		name := base
		for n := 2; taken[name]; n++ {
			suffix := "-" + strconv.Itoa(n)
			name = base[:min(len(base), names.Max-len(suffix))] + suffix
		}
		if name != base {
			why = append(why, base+" is taken")
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
		if dir != "" {
			if !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
			from[dir] = append(from[dir], name)
		}
		if len(why) > 0 {
			im.Warnings = append(im.Warnings, &Error{Pos: s.Pos, Field: old,
				Msg: fmt.Sprintf("renamed to %q: %s; its tools are served as %s__TOOL", name, strings.Join(why, ", and "), name)})
		}
	}
	for _, dir := range dirs {
		notes = append(notes, fmt.Sprintf("imported %s from project %s (Claude Code's local scope); its stdio servers run in that folder (cwd: %s)",
			strings.Join(from[dir], ", "), dir, dir))
	}
	return notes
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
func (d *decoder) clientVars(n *yaml.Node, field string, src *source, bad *[]*Error) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			d.clientVars(n.Content[i], join(field, n.Content[i-1].Value), src, bad)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			d.clientVars(c, fmt.Sprintf("%s[%d]", field, i), src, bad)
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
				id := strings.TrimPrefix(body, "input:")
				v := inputVar(id)
				if def, ok := src.inputs[id]; ok {
					warn("VS Code input %s became ${%s:-%s}, its default, since skillgate cannot prompt for it; set %s where the gateway runs for another value", ref, v, def, v)
					return "${" + v + ":-" + def + "}"
				}
				warn("VS Code input %s became ${%s}, since skillgate cannot prompt for it; set %s where the gateway runs, or write the value", ref, v, v)
				return "${" + v + "}"
			case strings.HasPrefix(body, "config:") || strings.HasPrefix(body, "command:"):
				editor = append(editor, ref)
			case slices.Contains(editorVars, body):
				if val, ok := src.editorValue(body); ok {
					return val
				}
				src.kept[body] = true
				warn("editor variable %s is kept as is, but skillgate runs outside the editor and would read it as an environment variable; replace it with the path or value it stands for", ref)
			case src.vscode && validRef(ref):
				warn("VS Code variable %s is kept as is and skillgate reads it as an environment variable; replace it with a value or ${VAR}", ref)
			}
			return ref
		})
		if len(editor) > 0 {
			*bad = append(*bad, &Error{Pos: d.at(n), Field: field,
				Msg: fmt.Sprintf("editor variable %s has no value outside the editor; replace it with the value it stands for, then import again", editor[0])})
			return
		}
		if v, refs := escapeBad(n.Value); len(refs) > 0 {
			n.Value = v
			for i, r := range refs {
				if len(r) > 40 {
					refs[i] = strings.ToValidUTF8(r[:40], "") + "..."
				}
			}
			if len(refs) > 3 {
				refs = append(refs[:3], fmt.Sprintf("%d more", len(refs)-3))
			}
			d.warns = append(d.warns, &Error{Pos: d.at(n), Field: field,
				Msg: fmt.Sprintf("skillgate cannot expand %s (it expands ${NAME} and ${NAME:-default}, NAME letters, digits and _), so it is written "+
					"as $%s in the skillgate config, and the server gets it as it is; if it stands for a value, write that value or a ${NAME} there instead",
					strings.Join(refs, ", "), refs[0])})
		}
		if _, err := Expand(n.Value, func(string) (string, bool) { return "", true }); err != nil {
			*bad = append(*bad, &Error{Pos: d.at(n), Field: field, Msg: err.Error() + "; then import again"})
		}
	}
}

// escapeBad returns s with each ${ that Expand would refuse (a reference
// that is not ${NAME} or ${NAME:-default}, or one not closed) written as
// $${, which Expand reads as a literal ${, and those references. It reads
// s as Expand does, in one pass (and one more for each default).
func escapeBad(s string) (string, []string) {
	var b strings.Builder
	var refs []string
	for {
		i := strings.Index(s, "${")
		switch {
		case i < 0:
			b.WriteString(s)
			return b.String(), refs
		case i > 0 && s[i-1] == '$':
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		if !strings.Contains(s[i:], "}") {
			// Nothing is closed from here on: every ${ left is literal.
			refs = append(refs, s[i:])
			rest := strings.ReplaceAll(s[i:], "$${", "${")
			b.WriteString(strings.ReplaceAll(rest, "${", "$${"))
			return b.String(), refs
		}
		end := closingBrace(s, i+2)
		var name, def string
		hasDef := false
		if end >= 0 {
			name, def, hasDef = strings.Cut(s[i+2:end], ":-")
		}
		if end < 0 || !validVarName(name) {
			// Literal, and what it holds is read on.
			ref := s[i:]
			if end >= 0 {
				ref = s[i : end+1]
			}
			refs = append(refs, ref)
			b.WriteString("$${")
			s = s[i+2:]
			continue
		}
		if hasDef {
			d, r := escapeBad(def)
			refs = append(refs, r...)
			b.WriteString("${" + name + ":-" + d + "}")
		} else {
			b.WriteString(s[i : end+1])
		}
		s = s[end+1:]
	}
}

// validRef reports whether Expand reads ref, one ${...}, as a variable.
func validRef(ref string) bool {
	_, err := Expand(ref, func(string) (string, bool) { return "", true })
	return err == nil
}

// shortName is the name of the server whose key in Imported is key: for
// a project's in ~/.claude.json, projects[DIR].NAME, the NAME.
func shortName(key string) string {
	if rest, ok := strings.CutPrefix(key, "projects["); ok {
		if i := strings.LastIndex(rest, "]."); i >= 0 {
			return rest[i+2:]
		}
	}
	return key
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
	// at, line and lineStart are where pos last looked: the offset, its
	// line (from 0) and the offset its line starts at. Tokens come in file
	// order, so pos goes on from there instead of counting from the start,
	// which made reading a file quadratic in its size.
	at, line, lineStart int64
	// scanned counts the bytes pos has read, for a test to hold it to
	// linear work.
	scanned int64
}

// pos returns the line and column of the byte at off.
func (p *jsonParser) pos(off int64) Pos {
	off = min(max(off, 0), int64(len(p.data)))
	if off < p.at { // an error's offset may lie behind: count anew
		p.at, p.line, p.lineStart = 0, 0, 0
	}
	seg := p.data[p.at:off]
	p.scanned += int64(len(seg))
	if n := bytes.Count(seg, []byte("\n")); n > 0 {
		p.line += int64(n)
		p.lineStart = p.at + int64(bytes.LastIndexByte(seg, '\n')) + 1
	}
	p.at = off
	return Pos{File: p.name, Line: int(p.line) + 1, Col: int(off-p.lineStart) + 1}
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

// projectDir returns the project folder of the client file at path, or ""
// when it is not a project's: the folder holding Claude Code's .mcp.json,
// or the one holding VS Code's .vscode or Cursor's .cursor folder (but
// not the home folder, whose .cursor/mcp.json is Cursor's global file).
func projectDir(path string) string {
	if path == "" {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	dir, base := filepath.Split(abs)
	dir = filepath.Clean(dir)
	switch up := filepath.Dir(dir); {
	case base == ".mcp.json":
		return dir
	case filepath.Base(dir) == ".vscode" && (base == "mcp.json" || base == "settings.json"):
		return up
	case filepath.Base(dir) == ".cursor" && base == "mcp.json":
		if home, err := os.UserHomeDir(); err == nil && filepath.Clean(home) == up {
			return ""
		}
		return up
	}
	return ""
}

// claudeProjects returns the server blocks of the projects in Claude
// Code's ~/.claude.json (root), each project's mcpServers, and notes
// saying what they are; only the one whose folder is project when that is
// set, and then an error when the file has none.
func claudeProjects(root *yaml.Node, file, project string) ([]serverBlock, []string, error) {
	projects := lookupKey(root, "projects")
	if projects == nil || projects.Kind != yaml.MappingNode {
		if project != "" {
			return nil, nil, &Error{Pos: Pos{File: file}, Msg: "no projects object, as Claude Code's ~/.claude.json has; import it without --project"}
		}
		return nil, nil, nil
	}
	want := ""
	if project != "" {
		abs, err := filepath.Abs(project)
		if err != nil {
			return nil, nil, fmt.Errorf("--project %s: %w", project, err)
		}
		want = filepath.Clean(abs)
	}
	var blocks []serverBlock
	var with []string
	for i := 0; i+1 < len(projects.Content); i += 2 {
		dir, p := projects.Content[i].Value, projects.Content[i+1]
		if p.Kind != yaml.MappingNode {
			continue
		}
		n := lookupKey(p, "mcpServers")
		if n == nil || (n.Kind == yaml.MappingNode && len(n.Content) == 0) {
			continue
		}
		with = append(with, dir)
		if want != "" && filepath.Clean(dir) != want {
			continue
		}
		blocks = append(blocks, serverBlock{key: "projects[" + dir + "].mcpServers", format: "mcpServers", node: n, dir: dir, project: true})
	}
	if want != "" && len(blocks) == 0 {
		return nil, nil, &Error{Pos: Pos{File: file}, Msg: fmt.Sprintf("no project %s with servers; those with servers are: %s",
			want, cmp.Or(strings.Join(with, ", "), "none"))}
	}
	var notes []string
	if want == "" && len(with) > 1 {
		notes = append(notes, fmt.Sprintf("imported the servers of %d projects of %s, with the user's; --project DIR imports one project's only", len(with), file))
	}
	return blocks, notes, nil
}

// inputDefaults adds the default of each of VS Code's inputs (the inputs
// list) to defs, by id: those a ${VAR:-default} can hold as it is.
func inputDefaults(inputs *yaml.Node, defs map[string]string) {
	if inputs == nil || inputs.Kind != yaml.SequenceNode {
		return
	}
	for _, in := range inputs.Content {
		if in.Kind != yaml.MappingNode {
			continue
		}
		id, def := lookupKey(in, "id"), lookupKey(in, "default")
		if id == nil || def == nil || id.Kind != yaml.ScalarNode || def.Kind != yaml.ScalarNode || def.Tag == "!!null" ||
			strings.ContainsAny(def.Value, "${}") {
			continue
		}
		defs[id.Value] = def.Value
	}
}

// escapePath returns the path p as the config writes it: each ${ as $${,
// which Expand reads as a literal ${ (a $ before anything else is kept as
// it is). A folder named /tmp/${SKILLGATE_TOKEN} must not become a
// reference to the gateway's variable.
func escapePath(p string) string { return strings.ReplaceAll(p, "${", "$${") }

// editorValue returns what the editor variable name stands for where
// skillgate can tell: the project folder and its name when the file is a
// project's, ${HOME} for the user's home, the path separator.
func (src *source) editorValue(name string) (string, bool) {
	var v string
	switch name {
	case "workspaceFolder":
		v = escapePath(src.workspace)
	case "workspaceFolderBasename":
		if src.workspace != "" {
			v = escapePath(filepath.Base(src.workspace))
		}
	case "userHome":
		v = "${HOME}"
	case "pathSeparator", "/":
		v = string(filepath.Separator)
	}
	if v == "" {
		return "", false
	}
	src.replaced[fmt.Sprintf("editor variable ${%s} became %s", name, v)] = true
	return v, true
}
