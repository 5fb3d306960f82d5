package skills

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// MaxFrontmatter is how much of a SKILL.md discovery reads: the
// frontmatter must close within it.
const MaxFrontmatter = 16 << 10

// nameRE is what a skill name may be: it becomes a path segment, a prompt
// name and part of skill:// URIs, so no dots, slashes or spaces. It
// accepts the Agent Skills spec's names (lowercase a-z, digits and
// hyphens) and, as Claude does, upper case and underscores.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$`) })

// nameRule says what nameRE accepts.
const nameRule = "1 to 64 characters of ASCII letters a-z and A-Z, digits 0-9, - and _, starting with a letter or digit " +
	"(the Agent Skills spec asks for lowercase a-z, digits and -)"

// Meta is a skill's frontmatter. Claude's keys (name, description,
// license, allowed-tools, metadata) are read as Claude reads them; tags,
// version, requires, execution and scripts are skillgate's additions. Any
// other key is kept in Raw and otherwise ignored, so existing skills load
// unchanged.
type Meta struct {
	// Name is the skill's name (required).
	Name string
	// Description says what the skill does and when to use it (required).
	Description string
	// Tags help find_skills; top-level tags or metadata.tags.
	Tags []string
	// Version is free text; top-level version or metadata.version.
	Version string
	// License is free text.
	License string
	// AllowedTools is Claude's allowed-tools, kept for clients.
	AllowedTools []string
	// Requires names what activating the skill activates.
	Requires Requires
	// Execution is the default policy of the skill's scripts.
	Execution Policy
	// Scripts holds per-script policies, keyed by a script's path under
	// scripts/ for a file there ("fill_form.py", "tools/check.sh" for
	// scripts/tools/check.sh), else by its path in the skill folder
	// ("ooxml/scripts/pack.py"); a key names the file under scripts/ when
	// both exist, as run_skill_script does.
	Scripts map[string]Policy
	// Raw is the frontmatter as written, for clients that want every key
	// (the MCP skills extension sends it verbatim).
	Raw map[string]any

	pos map[string]position // where keys are: "name", "scripts.fill.py"
}

// position is a line and column in a SKILL.md.
type position struct{ line, col int }

// Pos returns where the frontmatter writes field ("name", "scripts.x.py"
// for a script's policy, by its key without scripts/): the line of
// SKILL.md and the column of the key, or zeros when it does not.
func (m Meta) Pos(field string) (line, col int) {
	p := m.pos[field]
	return p.line, p.col
}

// at records where n, the key of field, is.
func (p *fmParser) at(m *Meta, field string, n *yaml.Node) {
	if m.pos == nil {
		m.pos = map[string]position{}
	}
	if _, ok := m.pos[field]; !ok {
		m.pos[field] = position{p.line(n), p.column(n)}
	}
}

// Requires is what a skill needs; activating the skill activates each.
type Requires struct {
	// Skills are other skills (by name or team/name).
	Skills []string `json:"skills,omitempty"`
	// Servers are MCP servers of the gateway's config.
	Servers []string `json:"servers,omitempty"`
	// Services are Docker services of the gateway's config.
	Services []string `json:"services,omitempty"`
	// Tools are tool names or globs of the gateway's catalog.
	Tools []string `json:"tools,omitempty"`
}

// Empty reports whether r requires nothing.
func (r Requires) Empty() bool {
	return len(r.Skills)+len(r.Servers)+len(r.Services)+len(r.Tools) == 0
}

// Policy is how a script runs. Zero fields inherit: a script's policy from
// the skill's execution, that from the library's defaults.
type Policy struct {
	// Timeout bounds one run.
	Timeout time.Duration `json:"timeout,omitempty"`
	// StallTimeout kills a run that printed nothing for this long.
	StallTimeout time.Duration `json:"stall_timeout,omitempty"`
	// Description says what the script does (shown by load_skill).
	Description string `json:"description,omitempty"`
	// Sandbox runs the script under bubblewrap (no network, read-only
	// system and skill folder).
	Sandbox bool `json:"sandbox,omitempty"`
	// Env names variables of the gateway's environment passed to the
	// script.
	Env []string `json:"env,omitempty"`
}

// merge fills p's zero fields from d.
func (p Policy) merge(d Policy) Policy {
	if p.Timeout == 0 {
		p.Timeout = d.Timeout
	}
	if p.StallTimeout == 0 {
		p.StallTimeout = d.StallTimeout
	}
	if !p.Sandbox {
		p.Sandbox = d.Sandbox
	}
	if len(p.Env) == 0 {
		p.Env = d.Env
	}
	return p
}

// Problem is one thing wrong with a skill; Line is 0 when unknown.
type Problem struct {
	// Path is the SKILL.md (or folder) the problem is in.
	Path string `json:"path"`
	// Line is the line in Path, when known.
	Line int `json:"line,omitempty"`
	// Column is the column in Line (1 for its first character), when
	// known.
	Column int `json:"column,omitempty"`
	// Field is the frontmatter key, when the problem is about one.
	Field string `json:"field,omitempty"`
	// Msg says what is wrong and what to do.
	Msg string `json:"msg"`
	// Warning problems do not keep the skill from being served.
	Warning bool `json:"warning,omitempty"`
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Path)
	if p.Line > 0 {
		b.WriteString(":" + strconv.Itoa(p.Line))
	}
	b.WriteString(": ")
	if p.Warning {
		b.WriteString("warning: ")
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// FrontmatterError lists what is wrong with a frontmatter.
type FrontmatterError struct {
	Problems []Problem
}

func (e *FrontmatterError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.String()
	}
	return strings.Join(msgs, "; ")
}

// ParseFrontmatter parses the YAML frontmatter at the start of src (a
// SKILL.md, or its first MaxFrontmatter bytes) and returns it with the
// offset in src where the body starts. Line numbers in problems count from
// the top of the file. Warnings come back in the *FrontmatterError too,
// with a usable Meta; callers tell them apart by Problem.Warning.
func ParseFrontmatter(src []byte) (Meta, int, error) {
	var m Meta
	yml, body, line0, err := splitFrontmatter(src)
	if err != nil {
		return m, 0, &FrontmatterError{Problems: []Problem{{Line: 1, Msg: err.Error()}}}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(yml, &doc); err != nil {
		line, msg := yamlMsg(err, line0)
		if n, ok := syntaxLine(yml); ok {
			line = line0 + n
		}
		if h := yamlHint(msg, lineOf(yml, line-line0), line); h != "" {
			msg += "; " + h
		}
		return m, 0, &FrontmatterError{Problems: []Problem{{Line: line, Msg: "frontmatter is not valid YAML: " + msg}}}
	}
	p := &fmParser{line0: line0 - 1}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		if root.Kind == 0 || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
			p.fail(nil, "", "the frontmatter is empty; write at least name: and description:")
		} else {
			p.fail(root, "", "the frontmatter must be a mapping of keys (name: ..., description: ...)")
		}
		return m, 0, p.err()
	}
	p.meta(root, &m)
	return m, body, p.err()
}

// splitFrontmatter finds the frontmatter between a first line "---" and
// the next line "---" (or "..."), looking at most at MaxFrontmatter
// bytes. It returns the YAML, the offset of the body and the line the YAML
// starts on.
func splitFrontmatter(src []byte) (yml []byte, body, line0 int, err error) {
	off := 0
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		off = 3
	}
	limit := min(len(src), MaxFrontmatter)
	first, next, ok := nextLine(src, off, limit)
	if !ok && next >= limit && limit == MaxFrontmatter {
		return nil, 0, 0, fmt.Errorf("the first line is longer than %d bytes; SKILL.md starts with a line \"---\"", MaxFrontmatter)
	}
	if strings.TrimRight(string(first), " \t\r") != "---" {
		return nil, 0, 0, fmt.Errorf("SKILL.md must start with a line \"---\" opening the YAML frontmatter (name: and description:), then a line \"---\"")
	}
	start := next
	for pos := next; pos < limit; {
		l, n, ok := nextLine(src, pos, limit)
		if !ok && n < len(src) {
			break // the line is cut by the limit
		}
		if t := strings.TrimRight(string(l), " \t\r"); t == "---" || t == "..." {
			return src[start:pos], n, 2, nil
		}
		pos = n
	}
	if limit == MaxFrontmatter && len(src) > limit {
		return nil, 0, 0, fmt.Errorf("the frontmatter does not close within the first %d KB; end it with a line \"---\" and move long text into the body", MaxFrontmatter>>10)
	}
	return nil, 0, 0, fmt.Errorf("the frontmatter is not closed; end it with a line \"---\"")
}

// nextLine returns the line starting at off (without its newline) and the
// offset after it; ok is false when no newline was found before limit.
func nextLine(src []byte, off, limit int) (line []byte, next int, ok bool) {
	i := bytes.IndexByte(src[off:limit], '\n')
	if i < 0 {
		return src[off:limit], limit, false
	}
	return src[off : off+i], off + i + 1, true
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })

// yamlMsg splits yaml.v3's "line N: msg" into the line, counted from the
// top of the file, and the message; without a line it returns line0.
func yamlMsg(err error, line0 int) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	m := yamlLineRE().FindStringSubmatch(msg)
	if m == nil {
		return line0, msg
	}
	n, _ := strconv.Atoi(m[1])
	return n + line0 - 1, msg[len(m[0]):]
}

// lineOf returns line k of yml (0 for its first), without its line end,
// or "".
func lineOf(yml []byte, k int) string {
	for i := 0; i < k; i++ {
		nl := bytes.IndexByte(yml, '\n')
		if nl < 0 {
			return ""
		}
		yml = yml[nl+1:]
	}
	if nl := bytes.IndexByte(yml, '\n'); nl >= 0 {
		yml = yml[:nl]
	}
	return strings.TrimRight(string(yml), "\r")
}

// yamlHint says what to do about the YAML errors a SKILL.md gets most,
// given yaml.v3's message and the text of the line (line, counted from
// the top of the file) that holds the mistake: a value holding ": "
// (YAML reads "Use this: when" as a mapping) and a tab indent.
func yamlHint(msg, text string, line int) string {
	indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
	switch {
	case strings.Contains(indent, "\t"):
		return fmt.Sprintf("line %d is indented with a tab, and YAML needs spaces: indent with spaces instead", line)
	case strings.Contains(msg, "mapping values are not allowed"):
		key, value, ok := strings.Cut(strings.TrimSpace(text), ": ")
		value = strings.TrimSpace(value)
		if !ok || !strings.Contains(value, ": ") || strings.ContainsAny(key, "\"'{[") || value[0] == '"' || value[0] == '\'' {
			return "a value holding \": \" must be in quotes"
		}
		return fmt.Sprintf("a value holding \": \" must be in quotes (YAML reads a: b as a mapping): put the value of %s in quotes: %s: %s", key, key, yamlQuote(value))
	}
	return ""
}

// yamlQuote writes v as a quoted YAML scalar: in double quotes unless it
// holds one, else in single quotes, with each ' in it doubled.
func yamlQuote(v string) string {
	if !strings.ContainsAny(v, "\"\\") {
		return `"` + v + `"`
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// maxSyntaxProbe bounds the bytes syntaxLine parses to find the line of
// a YAML syntax error (tens of milliseconds at worst; it runs only when a
// broken SKILL.md changed).
const maxSyntaxProbe = 256 << 10

// syntaxLine finds the line of yml (0 for its first) that holds its YAML
// syntax error: the one after the longest run of whole lines from the top
// that still parses. The line in yaml.v3's message cannot tell it: it is
// the start of the construct the parser was in or where it gave up,
// counted from 0 for some errors and from 1 for others, and left out on
// the first line. ok is false when finding it would take more than
// maxSyntaxProbe bytes of parsing.
func syntaxLine(yml []byte) (line int, ok bool) {
	starts := []int{0} // starts[k] is where line k starts
	for i, b := range yml {
		if b == '\n' && i+1 < len(yml) {
			starts = append(starts, i+1)
		}
	}
	budget := maxSyntaxProbe
	for k := len(starts) - 1; k >= 0 && budget >= starts[k]; k-- {
		budget -= starts[k]
		var doc yaml.Node
		if yaml.Unmarshal(yml[:starts[k]], &doc) == nil {
			return k, true
		}
	}
	return 0, false
}

type fmParser struct {
	line0 int
	probs []Problem
}

func (p *fmParser) line(n *yaml.Node) int {
	if n == nil {
		return 1
	}
	return n.Line + p.line0
}

func (p *fmParser) column(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Column
}

func (p *fmParser) fail(n *yaml.Node, field, format string, a ...any) {
	p.probs = append(p.probs, Problem{Line: p.line(n), Column: p.column(n), Field: field, Msg: fmt.Sprintf(format, a...)})
}

func (p *fmParser) warn(n *yaml.Node, field, format string, a ...any) {
	p.probs = append(p.probs, Problem{Line: p.line(n), Column: p.column(n), Field: field, Msg: fmt.Sprintf(format, a...), Warning: true})
}

func (p *fmParser) err() error {
	if len(p.probs) == 0 {
		return nil
	}
	return &FrontmatterError{Problems: p.probs}
}

// hasErrors reports whether err holds a problem that is not a warning.
func hasErrors(err error) bool {
	fe, ok := err.(*FrontmatterError)
	if !ok {
		return err != nil
	}
	return slices.ContainsFunc(fe.Problems, func(p Problem) bool { return !p.Warning })
}

func (p *fmParser) meta(root *yaml.Node, m *Meta) {
	var raw any
	if err := root.Decode(&raw); err == nil {
		if r, ok := jsonable(raw).(map[string]any); ok {
			m.Raw = r
		}
	}
	seen := map[string]bool{}
	values := map[string]*yaml.Node{} // where a problem with a key's value is
	var metadata *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		if seen[key] {
			p.fail(k, key, "written twice; keep one")
			continue
		}
		seen[key] = true
		values[key] = v
		p.at(m, key, k)
		switch key {
		case "name":
			m.Name = p.str(v, key)
		case "description":
			m.Description = strings.TrimSpace(p.str(v, key))
		case "tags":
			m.Tags = p.strList(v, key)
		case "version":
			m.Version = p.str(v, key)
		case "license":
			m.License = p.str(v, key)
		case "allowed-tools", "allowed_tools":
			m.AllowedTools = p.strList(v, key)
		case "metadata":
			metadata = v
		case "requires":
			m.Requires = p.requires(v)
		case "execution":
			m.Execution = p.policy(v, key)
		case "scripts":
			m.Scripts = p.scripts(v)
			if v.Kind == yaml.MappingNode {
				for i := 0; i < len(v.Content); i += 2 {
					p.at(m, "scripts."+strings.TrimPrefix(v.Content[i].Value, "scripts/"), v.Content[i])
				}
			}
		}
	}
	if metadata != nil && metadata.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(metadata.Content); i += 2 {
			k, v := metadata.Content[i], metadata.Content[i+1]
			switch {
			case k.Value == "tags" && m.Tags == nil:
				m.Tags = p.strList(v, "metadata.tags")
			case k.Value == "version" && m.Version == "":
				m.Version = p.str(v, "metadata.version")
			}
		}
	}
	switch {
	case p.failed("name"):
	case !seen["name"]:
		p.fail(root, "name", "missing; name the skill like its folder: %s", nameRule)
	case m.Name == "":
		p.fail(values["name"], "name", "empty; name the skill like its folder: %s", nameRule)
	case !nameRE().MatchString(m.Name):
		p.fail(values["name"], "name", "%q is not a skill name: %s", m.Name, nameRule)
	}
	switch {
	case p.failed("description"):
	case !seen["description"]:
		p.fail(root, "description", "missing; say what the skill does and when to use it, the model reads it to pick skills")
	case m.Description == "":
		p.fail(values["description"], "description", "empty; say what the skill does and when to use it, the model reads it to pick skills")
	case len(m.Description) > 1024:
		p.warn(values["description"], "description", "longer than 1024 characters; cards show the start only")
	}
}

// failed reports whether a problem about field was reported already.
func (p *fmParser) failed(field string) bool {
	return slices.ContainsFunc(p.probs, func(pr Problem) bool { return pr.Field == field && !pr.Warning })
}

func (p *fmParser) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode {
		p.fail(n, field, "want text, got a %s", kindName(n))
		return ""
	}
	if n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// strList accepts a list of strings or one string of comma- or
// space-separated items (as allowed-tools is often written).
func (p *fmParser) strList(n *yaml.Node, field string) []string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil
		}
		return strings.FieldsFunc(n.Value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				p.fail(c, field, "want a list of text items, got a %s in it", kindName(c))
				continue
			}
			if s := strings.TrimSpace(c.Value); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	p.fail(n, field, "want a list like [a, b], got a %s", kindName(n))
	return nil
}

func (p *fmParser) requires(n *yaml.Node) Requires {
	var r Requires
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return r
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, "requires", "want a mapping like {skills: [...], servers: [...], services: [...], tools: [...]}")
		return r
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := "requires." + k.Value
		switch k.Value {
		case "skills":
			r.Skills = p.strList(v, f)
		case "servers":
			r.Servers = p.strList(v, f)
		case "services":
			r.Services = p.strList(v, f)
		case "tools":
			r.Tools = p.strList(v, f)
		default:
			p.fail(k, f, "unknown; requires holds skills, servers, services and tools")
		}
	}
	return r
}

func (p *fmParser) policy(n *yaml.Node, field string) Policy {
	var pol Policy
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return pol
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, field, "want a mapping like {timeout: 30s, stall_timeout: 10s}")
		return pol
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := field + "." + k.Value
		switch k.Value {
		case "timeout":
			pol.Timeout = p.duration(v, f)
		case "stall_timeout", "stall-timeout":
			pol.StallTimeout = p.duration(v, f)
		case "description":
			pol.Description = strings.TrimSpace(p.str(v, f))
		case "sandbox":
			pol.Sandbox = p.boolean(v, f)
		case "env":
			pol.Env = p.strList(v, f)
			p.envNames(v, f, pol.Env)
		default:
			p.fail(k, f, "unknown; a policy holds timeout, stall_timeout, description, sandbox and env")
		}
	}
	return pol
}

// policyEnvRE is what an env: entry may be: the variable names the script
// executor's spec takes (plugins/toolspec), which is what a run of
// skills/run.go passes them to. TestPolicyEnvNames holds the two to
// the same answer.
var policyEnvRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// envNames fails each entry of an env: list (n, read as names) that is not
// a variable name: every run of the script would fail on it.
func (p *fmParser) envNames(n *yaml.Node, field string, names []string) {
	for i, name := range names {
		if policyEnvRE().MatchString(name) {
			continue
		}
		at := n
		if n.Kind == yaml.SequenceNode && i < len(n.Content) {
			at = n.Content[i]
		}
		advice := "letters, digits and _, not starting with a digit"
		if strings.ContainsAny(name, "*?") {
			advice = "a pattern is not expanded"
		}
		p.fail(at, fmt.Sprintf("%s[%d]", field, i), "%q is not a variable name; list the variables the script needs by name, like [AWS_REGION, AWS_PROFILE] (%s; the script gets no other variable of the gateway's environment)", name, advice)
	}
}

func (p *fmParser) scripts(n *yaml.Node) map[string]Policy {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, "scripts", "want a mapping of script paths (under scripts/, or in the skill folder) to policies, like {fill.py: {timeout: 2m}}")
		return nil
	}
	out := map[string]Policy{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := strings.TrimPrefix(k.Value, "scripts/")
		if msg := relProblem(name); msg != "" {
			p.fail(k, "scripts."+k.Value, "%s", msg)
			continue
		}
		if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
			out[name] = Policy{Description: strings.TrimSpace(v.Value)}
			continue
		}
		out[name] = p.policy(v, "scripts."+k.Value)
	}
	return out
}

func (p *fmParser) duration(n *yaml.Node, field string) time.Duration {
	if n.Kind != yaml.ScalarNode {
		p.fail(n, field, "want a duration like 30s or 2m, got a %s", kindName(n))
		return 0
	}
	if n.Tag == "!!int" || n.Tag == "!!float" {
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || f < 0 || f > 86400 {
			p.fail(n, field, "%q is not a number of seconds between 0 and 86400", n.Value)
			return 0
		}
		return time.Duration(f * float64(time.Second))
	}
	d, err := time.ParseDuration(strings.TrimSpace(n.Value))
	if err != nil || d < 0 {
		p.fail(n, field, "%q is not a duration; write it like 30s, 2m or 1m30s", n.Value)
		return 0
	}
	return d
}

func (p *fmParser) boolean(n *yaml.Node, field string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		p.fail(n, field, "want true or false")
	}
	return b
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}

// jsonable turns decoded YAML into values encoding/json can marshal
// (mappings with non-string keys get their keys printed).
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonable(x)
		}
		return t
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[fmt.Sprint(k)] = jsonable(x)
		}
		return out
	case []any:
		for i, x := range t {
			t[i] = jsonable(x)
		}
		return t
	case time.Time:
		return t.Format(time.RFC3339)
	}
	return v
}
