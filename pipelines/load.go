package pipelines

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/yamldoc"

	"gopkg.in/yaml.v3"
)

// maxFileSize bounds a pipeline file.
const maxFileSize = 1 << 20

// Loader reads and compiles pipelines. Its zero value accepts any tool
// name; a gateway sets Tools so unknown tools are load errors.
type Loader struct {
	// Tools reports whether a tool exists, by the gateway's name. Nil
	// accepts every name. Pipelines of the same batch (one Load, Parse or
	// ParseNode call) are known by their ToolName without asking.
	Tools func(name string) bool
	// ToolName maps a pipeline's name to the name it is served under;
	// nil means "pipelines__" + name. It must match the gateway's naming,
	// since steps call pipelines by that name and the recursion guard
	// compares it.
	ToolName func(name string) string
	// Env is the environment expressions may read as env.NAME: only what
	// the gateway allows. Its keys are checked at load.
	Env map[string]string
	// Limits bound each expression; zero fields take the defaults.
	Limits Limits
	// Inline, when set, is compiled by Load in the same batch as the
	// folders: the YAML node of inline pipelines from the gateway config.
	Inline *yaml.Node
	// InlineFile names the file Inline comes from, for error positions.
	InlineFile string
}

func (l *Loader) toolName(name string) string {
	if l.ToolName != nil {
		return l.ToolName(name)
	}
	return "pipelines__" + name
}

// doc is one pipeline document waiting to be compiled.
type doc struct {
	d    *decoder
	node *yaml.Node
	name string // default name
}

// Load compiles every *.yaml and *.yml file directly inside dirs (and
// Inline) as one batch. It returns the pipelines that compiled and every
// problem, joined; each problem is an *Error.
func (l *Loader) Load(dirs ...string) ([]*Pipeline, error) {
	var docs []doc
	var errs []*Error
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, &Error{Pos: Pos{File: dir}, Msg: fmt.Sprintf("cannot read the pipelines folder: %v", err)})
			continue
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			f, err := os.Open(path)
			if err != nil {
				errs = append(errs, &Error{Pos: Pos{File: path}, Msg: err.Error()})
				continue
			}
			ds, es := l.read(f, path)
			f.Close()
			docs, errs = append(docs, ds...), append(errs, es...)
		}
	}
	if l.Inline != nil {
		ds, es := l.nodeDocs(l.Inline, l.InlineFile)
		docs, errs = append(docs, ds...), append(errs, es...)
	}
	return l.batch(docs, errs)
}

// Parse compiles the pipelines in r (one per YAML document) as one batch;
// filename is used in positions and, without the extension, as the name
// of a pipeline that has none.
func (l *Loader) Parse(r io.Reader, filename string) ([]*Pipeline, error) {
	docs, errs := l.read(r, filename)
	return l.batch(docs, errs)
}

// ParseNode compiles inline pipelines from a gateway config: n is either a
// mapping of names to pipelines, a list of pipelines, or one pipeline (a
// mapping with steps). filename is used in positions.
func (l *Loader) ParseNode(n *yaml.Node, filename string) ([]*Pipeline, error) {
	docs, errs := l.nodeDocs(n, filename)
	return l.batch(docs, errs)
}

func (l *Loader) read(r io.Reader, filename string) ([]doc, []*Error) {
	b, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, []*Error{{Pos: Pos{File: filename}, Msg: err.Error()}}
	}
	if len(b) > maxFileSize {
		return nil, []*Error{{Pos: Pos{File: filename}, Msg: fmt.Sprintf("the file is larger than %d bytes; split it", maxFileSize)}}
	}
	if p, bad := yamldoc.UTF8(b); bad {
		return nil, []*Error{problemError(filename, p)}
	}
	base := strings.TrimSuffix(filepath.Base(filename), filepath.Ext(filename))
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []doc
	var errs []*Error
	for i := 0; ; i++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return docs, append(errs, syntaxError(filename, err, b))
		}
		if es := aliasErrors(filename, &n); es != nil {
			errs = append(errs, es...)
			continue
		}
		d := &decoder{file: filename}
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s-%d", base, i+1)
		}
		docs = append(docs, doc{d: d, node: &n, name: name})
	}
	return docs, errs
}

// syntaxError is err, yaml.v3's error for data, at the place of the
// problem. An expression in a { } or [ ] value is the usual cause of an
// unclosed one: the braces of ${{ }} end it early.
func syntaxError(filename string, err error, data []byte) *Error {
	p := yamldoc.Syntax(err, data)
	if strings.HasPrefix(p.Msg, "did not find expected ',' or") && strings.Contains(line(data, p.Line), "${{") {
		msg, _, _ := strings.Cut(p.Msg, ";")
		p.Msg = msg + `; a value holding ${{ }} inside { } or [ ] must be quoted: write "${{ ... }}"`
	}
	p.Msg = "invalid YAML: " + p.Msg
	return problemError(filename, p)
}

// line returns the nth line of data, counting from 1.
func line(data []byte, n int) string {
	for i := 1; i < n; i++ {
		_, rest, ok := bytes.Cut(data, []byte("\n"))
		if !ok {
			return ""
		}
		data = rest
	}
	l, _, _ := bytes.Cut(data, []byte("\n"))
	return string(l)
}

// aliasErrors returns the problems yamldoc.Aliases finds in n: a
// document with one is not walked.
func aliasErrors(filename string, n *yaml.Node) []*Error {
	var errs []*Error
	for _, p := range yamldoc.Aliases(n) {
		errs = append(errs, problemError(filename, p))
	}
	return errs
}

func problemError(filename string, p yamldoc.Problem) *Error {
	return &Error{Pos: Pos{File: filename, Line: p.Line, Col: p.Col}, Field: p.Field, Msg: p.Msg}
}

func (l *Loader) nodeDocs(n *yaml.Node, filename string) ([]doc, []*Error) {
	if errs := aliasErrors(filename, n); errs != nil {
		return nil, errs
	}
	d := &decoder{file: filename}
	n = d.resolve(n, "")
	if n == nil {
		return nil, d.errs
	}
	switch n.Kind {
	case yaml.SequenceNode:
		var docs []doc
		for i, c := range n.Content {
			docs = append(docs, doc{d: &decoder{file: filename}, node: c, name: fmt.Sprintf("pipeline-%d", i+1)})
		}
		return docs, nil
	case yaml.MappingNode:
		ps, _ := d.mapping(n, "")
		if valueOf(ps, "steps") != nil {
			return []doc{{d: d, node: n, name: "pipeline"}}, nil
		}
		var docs []doc
		for _, p := range ps {
			docs = append(docs, doc{d: &decoder{file: filename}, node: p.v, name: p.k.Value})
		}
		return docs, d.errs
	}
	if isNull(n) {
		return nil, nil
	}
	d.fail(n, "", "want pipelines: a mapping of names to pipelines, or a list of them")
	return nil, d.errs
}

func (l *Loader) batch(docs []doc, errs []*Error) ([]*Pipeline, error) {
	eng := newEngine(l.Limits)
	// Names first, so pipelines may call each other in any order.
	names := map[string]bool{}
	for _, dc := range docs {
		name := dc.name
		if n := dc.d.resolve(dc.node, ""); n != nil && n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "name" && n.Content[i+1].Kind == yaml.ScalarNode {
					name = n.Content[i+1].Value
				}
			}
		}
		names[l.toolName(name)] = true
	}
	tools := func(t string) bool { return names[t] || l.Tools == nil || l.Tools(t) }
	var out []*Pipeline
	seen := map[string]*Pipeline{}
	for _, dc := range docs {
		p := l.compileDoc(dc.d, eng, dc.node, dc.name, tools)
		errs = append(errs, dc.d.errs...)
		if p == nil {
			continue
		}
		if prev := seen[p.Name]; prev != nil {
			errs = append(errs, &Error{Pos: p.Pos, Field: "name", Msg: fmt.Sprintf("pipeline %q is already defined at %s; rename one", p.Name, prev.Pos)})
			continue
		}
		seen[p.Name] = p
		out = append(out, p)
	}
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i].Pos, errs[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	joined := make([]error, len(errs))
	for i, e := range errs {
		joined[i] = e
	}
	return out, errors.Join(joined...)
}
