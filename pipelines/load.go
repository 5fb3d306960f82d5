package pipelines

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

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
	// ToolSchema, when set, returns the input schema (JSON) of a tool that
	// is not a pipeline of the batch, or nil when it is not known. Each
	// step's with is checked against it: an argument name the schema does
	// not list, or a required argument with does not set, is a warning
	// (Pipeline.Warnings) and does not hold the pipeline back, since the
	// tool's server owns the schema and may change it while the pipeline
	// is served. A step calling a pipeline of the batch is checked against
	// that pipeline's inputs, and there the same findings are problems.
	ToolSchema func(name string) json.RawMessage
	// ToolPending, when set, says why a tool Tools does not know may
	// still come, such as "server notes is starting" or "server notes is
	// failed: exit status 1" for a tool in the namespace of a server that
	// is not ready, or "" when nothing is pending. The step's problem is
	// then "<tool>: <why>" instead of an unknown tool, since the tool is
	// only missing until its server is ready; the pipeline is not served
	// meanwhile.
	ToolPending func(name string) string
	// ToolNames, when set, lists the tools Tools knows, so an unknown
	// tool's error can suggest the nearest name. It is called at most
	// once per Load, Parse or ParseNode, and only when a tool is unknown.
	ToolNames func() []string
	// ToolName maps a pipeline's name to the name it is served under;
	// nil means "pipelines__" + name. It must match the gateway's naming,
	// since steps call pipelines by that name and the recursion guard
	// compares it.
	ToolName func(name string) string
	// Services, when set, lists the services (Docker) a pipeline's
	// requires may name: a name it does not list is a problem of the
	// pipeline, with the nearest name. Nil accepts every name. It is
	// called at most once per pipeline that has requires.
	Services func() []string
	// Env is the environment expressions may read as env.NAME: only what
	// the gateway allows, with "" for an allowed variable that is not set
	// (so unsetting one does not stop pipelines from loading). Its keys are
	// checked at load.
	Env map[string]string
	// Limits bound each expression; zero fields take the defaults.
	Limits Limits
	// Inline, when set, is compiled by Load in the same batch as the
	// folders: the YAML node of inline pipelines from the gateway config.
	Inline *yaml.Node
	// InlineFile names the file Inline comes from, for error positions.
	InlineFile string
	// Overlay, when set, holds file contents by path (a folder of Load
	// joined with a file name) that Load reads in place of the file; a
	// path that is not on disk is added, as if written. The gateway's
	// management tools check a pipeline with all the others this way
	// before they save it.
	Overlay map[string][]byte
	// Served, when set, returns the file (Pos.File) of the definition of
	// pipeline name being served now, or "". Two definitions of one name
	// are a problem reported on each; the one in that file stays served
	// and the others are not. Without one served (or without Served), no
	// definition of the name is served, whatever the order of the files.
	Served func(name string) string
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
	// label prefixes the fields of its problems, so each names the
	// pipeline it is about where a file holds several: the key of an
	// inline pipeline, or its index in a list of them.
	label string
}

// Load compiles every *.yaml and *.yml file directly inside dirs (and
// Inline) as one batch. It returns the pipelines that compiled and every
// problem, joined; each problem is an *Error.
func (l *Loader) Load(dirs ...string) ([]*Pipeline, error) {
	var docs []doc
	var errs []*Error
	overlay := make(map[string][]byte, len(l.Overlay))
	for path, b := range l.Overlay {
		overlay[filepath.Clean(path)] = b
	}
	for _, dir := range dirs {
		var paths []string
		for path := range overlay {
			if filepath.Dir(path) == filepath.Clean(dir) && isPipelineFile(path) {
				paths = append(paths, path)
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil && !(len(paths) > 0 && errors.Is(err, fs.ErrNotExist)) {
			errs = append(errs, &Error{Pos: Pos{File: dir}, Msg: fmt.Sprintf("cannot read the pipelines folder: %v", err)})
			continue
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			if _, over := overlay[filepath.Clean(path)]; !e.IsDir() && isPipelineFile(path) && !over {
				paths = append(paths, path)
			}
		}
		slices.Sort(paths)
		for _, path := range paths {
			if b, ok := overlay[filepath.Clean(path)]; ok {
				ds, es := l.read(bytes.NewReader(b), path)
				docs, errs = append(docs, ds...), append(errs, es...)
				continue
			}
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

// isPipelineFile reports whether path names a pipeline file by its
// extension.
func isPipelineFile(path string) bool {
	ext := filepath.Ext(path)
	return ext == ".yaml" || ext == ".yml"
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
		if len(n.Content) == 1 && isNull(n.Content[0]) && n.Content[0].Value == "" {
			continue // an empty document, such as a --- before the first
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
	if len(docs) == 0 && len(errs) == 0 {
		errs = append(errs, &Error{Pos: Pos{File: filename}, Msg: "the file holds no pipeline: it is empty or only comments; write a pipeline (steps, each with an id and a tool) or remove the file"})
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
			docs = append(docs, doc{d: &decoder{file: filename}, node: c, name: fmt.Sprintf("pipeline-%d", i+1), label: fmt.Sprintf("[%d]", i)})
		}
		return docs, nil
	case yaml.MappingNode:
		ps, _ := d.mapping(n, "")
		if valueOf(ps, "steps") != nil {
			return []doc{{d: d, node: n, name: "pipeline"}}, nil
		}
		var docs []doc
		for _, p := range ps {
			docs = append(docs, doc{d: &decoder{file: filename}, node: p.v, name: p.k.Value, label: p.k.Value})
		}
		return docs, d.errs
	}
	if isNull(n) {
		return nil, nil
	}
	d.fail(n, "", "want pipelines: a mapping of names to pipelines, or a list of them")
	return nil, d.errs
}

// head is what batch learns of a document before compiling it: the name
// of its pipeline and where that name is written.
type head struct {
	name  string
	pos   Pos
	label string
}

func (l *Loader) head(dc doc) head {
	h := head{name: dc.name, pos: dc.d.at(dc.node), label: dc.label}
	if n := dc.d.resolve(dc.node, ""); n != nil && n.Kind == yaml.MappingNode {
		h.pos = dc.d.at(n)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := n.Content[i+1]; n.Content[i].Value == "name" && v.Kind == yaml.ScalarNode {
				h.name, h.pos = v.Value, dc.d.at(v)
			}
		}
	}
	return h
}

func (l *Loader) batch(docs []doc, errs []*Error) ([]*Pipeline, error) {
	eng := newEngine(l.Limits)
	// Names first, so pipelines may call each other in any order.
	heads := make([]head, len(docs))
	byName := map[string][]int{}
	var order []string
	names := map[string]bool{}
	for i, dc := range docs {
		heads[i] = l.head(dc)
		name := heads[i].name
		if byName[name] == nil {
			order = append(order, name)
		}
		byName[name] = append(byName[name], i)
		names[l.toolName(name)] = true
	}
	rejected := map[int]bool{}
	for _, name := range order {
		if idx := byName[name]; len(idx) > 1 {
			errs = append(errs, l.duplicates(name, idx, heads, rejected)...)
		}
	}
	tools := func(t string) bool { return names[t] || l.Tools == nil || l.Tools(t) }
	toolList := sync.OnceValue(func() []string {
		known := slices.Sorted(maps.Keys(names))
		if l.ToolNames != nil {
			known = append(known, l.ToolNames()...)
		}
		return known
	})
	var out []*Pipeline
	for i, dc := range docs {
		p := l.compileDoc(dc.d, eng, dc.node, dc.name, tools, toolList)
		for _, e := range dc.d.errs {
			e.Field = labelled(dc.label, e.Field)
			e.Pipeline = heads[i].name
		}
		errs = append(errs, dc.d.errs...)
		if p != nil && !rejected[i] {
			p.label = dc.label
			out = append(out, p)
		}
	}
	out, more := l.crossCheck(out, heads)
	errs = append(errs, more...)
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

// duplicates reports each definition of name (the documents idx) and
// marks in rejected those not to serve: all but the one Served names, or
// all of them.
func (l *Loader) duplicates(name string, idx []int, heads []head, rejected map[int]bool) []*Error {
	keep := -1
	if l.Served != nil {
		if file := l.Served(name); file != "" {
			for _, i := range idx {
				if heads[i].pos.File == file {
					if keep >= 0 { // two in the served file: no telling which
						keep = -1
						break
					}
					keep = i
				}
			}
		}
	}
	var errs []*Error
	for _, i := range idx {
		var others []string
		for _, j := range idx {
			if j != i {
				others = append(others, heads[j].pos.String())
			}
		}
		also := strings.Join(others, ", ")
		var msg string
		switch {
		case keep < 0:
			msg = fmt.Sprintf("pipeline %q is also defined at %s; neither is served until one is renamed or removed", name, also)
			if len(idx) > 2 {
				msg = fmt.Sprintf("pipeline %q is also defined at %s; none is served until all but one are renamed or removed", name, also)
			}
		case i == keep:
			msg = fmt.Sprintf("pipeline %q is also defined at %s, which is not served; rename or remove one", name, also)
		default:
			msg = fmt.Sprintf("pipeline %q is already served from %s; this definition is not served until one of them is renamed or removed", name, heads[keep].pos)
		}
		if i != keep {
			rejected[i] = true
		}
		errs = append(errs, &Error{Pos: heads[i].pos, Field: labelled(heads[i].label, "name"), Msg: msg, Pipeline: name})
	}
	return errs
}

// labelled is field prefixed with label (see doc.label).
func labelled(label, field string) string {
	switch {
	case label == "":
		return field
	case field == "":
		return label
	case strings.HasPrefix(field, "["):
		return label + field
	}
	return label + "." + field
}

// holdBack drops the pipelines that call, directly or through others, a
// pipeline of the batch that is not served, with a problem on each call.
func (l *Loader) holdBack(ps []*Pipeline, heads []head) ([]*Pipeline, []*Error) {
	type def struct{ name, pos string }
	batch := map[string]def{}
	for i := range heads {
		t := l.toolName(heads[i].name)
		if _, ok := batch[t]; !ok {
			batch[t] = def{heads[i].name, heads[i].pos.String()}
		}
	}
	served := make(map[string]bool, len(ps))
	for _, p := range ps {
		served[p.ToolName] = true
	}
	var errs []*Error
	for changed := true; changed; {
		changed = false
		for _, p := range ps {
			if !served[p.ToolName] {
				continue
			}
			for i, s := range p.Steps {
				callee, inBatch := batch[s.Tool]
				if !inBatch || served[s.Tool] {
					continue
				}
				errs = append(errs, &Error{Pos: s.toolPos, Field: labelled(p.label, fmt.Sprintf("steps[%d].tool", i)), Pipeline: p.Name,
					Msg: fmt.Sprintf("pipeline %s (%s, %s) has problems and is not served; %s is held back until it loads", callee.name, s.Tool, callee.pos, p.Name)})
				served[p.ToolName], changed = false, true
				break
			}
		}
	}
	kept := ps[:0]
	for _, p := range ps {
		if served[p.ToolName] {
			kept = append(kept, p)
		}
	}
	return kept, errs
}
