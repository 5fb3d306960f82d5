package toolstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/skillgate/skillgate/plugins/toolspec"
)

func mapsKeys(m map[string]string) iter.Seq[string] { return maps.Keys(m) }

// checkRel jails a file name inside the tool folder: relative, no "..",
// no NUL, not the folder itself. It returns the cleaned name.
func checkRel(p string) (string, error) {
	switch {
	case p == "" || strings.ContainsRune(p, 0):
		return "", fmt.Errorf("%w: file name %q is empty or holds a NUL byte", ErrBadInput, p)
	case filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`):
		return "", fmt.Errorf("%w: file name %q is absolute; name files relative to the tool folder", ErrBadInput, p)
	case !filepath.IsLocal(p):
		return "", fmt.Errorf("%w: file name %q leaves the tool folder; keep every file inside it (no ..)", ErrBadInput, p)
	}
	c := filepath.Clean(p)
	if c == "." {
		return "", fmt.Errorf("%w: file name %q names the folder itself", ErrBadInput, p)
	}
	return c, nil
}

// checkFiles validates a change's file names and sizes, before anything is
// written. tool.yaml among the files is taken as the definition, unless
// Change.Tool gives one.
func checkFiles(c Change) (map[string]string, error) {
	if len(c.Files)+len(c.Remove) > MaxFiles {
		return nil, fmt.Errorf("%w: %d files; at most %d per change", ErrBadInput, len(c.Files)+len(c.Remove), MaxFiles)
	}
	out := make(map[string]string, len(c.Files))
	total := 0
	for p, content := range c.Files {
		rel, err := checkRel(p)
		if err != nil {
			return nil, err
		}
		if rel == toolspec.FileName {
			if c.Tool != nil {
				return nil, fmt.Errorf("%w: both tool and files[\"tool.yaml\"] define the tool; give one", ErrBadInput)
			}
			continue // written from the validated definition
		}
		if _, dup := out[rel]; dup {
			return nil, fmt.Errorf("%w: file %q is given twice", ErrBadInput, rel)
		}
		if strings.HasPrefix(filepath.Base(rel), ".tmp-") {
			return nil, fmt.Errorf("%w: file name %q is reserved", ErrBadInput, p)
		}
		total += len(content)
		if total > MaxBytes {
			return nil, fmt.Errorf("%w: the files add up to more than %d bytes", ErrBadInput, MaxBytes)
		}
		out[rel] = content
	}
	for _, r := range c.Remove {
		rel, err := checkRel(r)
		if err != nil {
			return nil, err
		}
		if rel == toolspec.FileName {
			return nil, fmt.Errorf("%w: tool.yaml cannot be removed; delete the tool instead", ErrBadInput)
		}
	}
	return out, nil
}

// writeFile creates dir/rel (and its parent folders). dir is a fresh
// temporary folder holding no symlinks, and O_NOFOLLOW refuses one anyway.
// Scripts are made executable, so runtime exec works.
func writeFile(dir, rel, content string) error {
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if strings.HasPrefix(content, "#!") {
		mode = 0o755
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|oNoFollow, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if _, err := io.WriteString(f, content); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

// copyTree copies the regular files and folders of src into dst (which
// exists). A symlink or any other special file is an error: a managed tool
// folder holds plain files only.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, fi.Mode().Perm()|0o700)
		case fi.Mode().IsRegular():
			return copyFile(p, to, fi.Mode().Perm())
		default:
			return fmt.Errorf("%w: %s is a symlink or special file; a managed tool folder holds plain files only", ErrBadInput, rel)
		}
	})
}

func copyFile(from, to string, perm os.FileMode) error {
	in, err := os.OpenFile(from, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// keyOrder is the order tool.yaml keys are written in; others follow sorted.
var keyOrder = []string{"name", "title", "description", "version", "runtime", "entry", "args", "protocol", "mode",
	"timeout", "stall_timeout", "input_schema", "output_schema", "annotations", "env", "secrets",
	"sandbox", "ulimits", "dependencies", "requires", "wasm"}

// toolYAML turns a JSON object of tool.yaml keys into tool.yaml text, with
// name set to name when it is left out.
func toolYAML(name string, raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: tool is not JSON: %v", ErrBadInput, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: tool must be a JSON object of tool.yaml keys (description, runtime, entry, ...)", ErrBadInput)
	}
	if n, ok := obj["name"]; !ok || n == "" {
		obj["name"] = name
	}
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string) error {
		val := &yaml.Node{}
		if err := val.Encode(plainNumbers(obj[k])); err != nil {
			return fmt.Errorf("%w: tool.%s: %v", ErrBadInput, k, err)
		}
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, val)
		delete(obj, k)
		return nil
	}
	for _, k := range keyOrder {
		if _, ok := obj[k]; ok {
			if err := add(k); err != nil {
				return nil, err
			}
		}
	}
	rest := make([]string, 0, len(obj))
	for k := range obj {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	for _, k := range rest {
		if err := add(k); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	buf.WriteString("# Written by skillgate's tool management; edit freely.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// plainNumbers turns json.Numbers into int64 or float64, which YAML writes
// unquoted.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainNumbers(e)
		}
	}
	return v
}
