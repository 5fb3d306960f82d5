package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"

	"gopkg.in/yaml.v3"
)

// MarshalServers writes servers as the YAML of a skillgate.yaml servers:
// block, in order and then any other keys sorted. Settings left at their
// defaults are left out.
func MarshalServers(servers map[string]*Server, order []string) ([]byte, error) {
	n, err := serversNode(servers, order)
	if err != nil {
		return nil, err
	}
	return encodeYAML(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{strNode("servers"), n}})
}

// Merge is MergeServers with MergeFail, or MergeOverwrite when
// overwrite is true, returning the new text alone.
func Merge(cfgYAML []byte, name string, servers map[string]*Server, order []string, overwrite bool) ([]byte, error) {
	mode := MergeFail
	if overwrite {
		mode = MergeOverwrite
	}
	res, err := MergeServers(cfgYAML, name, servers, order, mode)
	if err != nil {
		return nil, err
	}
	return res.Out, nil
}

// MergeMode says what MergeServers does with a server whose name the
// config already has for a different definition.
type MergeMode int

const (
	// MergeFail merges nothing and returns an error naming every such
	// server (each wrapping ErrNameClash).
	MergeFail MergeMode = iota
	// MergeSkip keeps the config's definition and merges the others.
	MergeSkip
	// MergeOverwrite replaces the config's definition.
	MergeOverwrite
)

// MergeResult is what MergeServers did, server names in the order given.
type MergeResult struct {
	// Out is the config's new text.
	Out []byte
	// Added are the servers the config did not have; Same those it had
	// with the same definition, left as they are; Skipped those it had
	// otherwise, kept (MergeSkip); Replaced those it had otherwise,
	// replaced (MergeOverwrite).
	Added, Same, Skipped, Replaced []string
}

// MergeServers adds servers to the servers: block of a skillgate.yaml
// held in cfgYAML, read from the file called name (errors name it),
// keeping its comments, and returns the new text and what it did. A
// server the file already has with the same definition (as written, before
// its ${VAR}s are expanded) is left as it is; one it has with another
// definition is handled as mode says. yaml.v3 re-indents the file to two
// spaces. A file of more than one YAML document is an error, as Parse
// would read only the first.
func MergeServers(cfgYAML []byte, name string, servers map[string]*Server, order []string, mode MergeMode) (*MergeResult, error) {
	if err := checkUTF8(cfgYAML, name); err != nil {
		return nil, err
	}
	doc, err := readDocument(cfgYAML, name)
	if err != nil {
		return nil, err
	}
	if doc == nil || len(doc.Content) == 0 {
		doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		*root = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: root.HeadComment, LineComment: root.LineComment, FootComment: root.FootComment}
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Pos: Pos{File: name, Line: root.Line, Col: root.Column}, Msg: "the config is not a mapping of keys to values; fix it before merging"}
	}
	block := lookupKey(root, "servers")
	switch {
	case block == nil:
		block = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		root.Content = append(root.Content, strNode("servers"), block)
	case block.Kind == yaml.ScalarNode && block.ShortTag() == "!!null":
		*block = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", LineComment: block.LineComment}
	case block.Kind != yaml.MappingNode:
		return nil, &Error{Pos: Pos{File: name, Line: block.Line, Col: block.Column}, Field: "servers",
			Msg: "not a mapping of server names; fix it before merging"}
	}
	block.Style &^= yaml.FlowStyle
	add, err := serversNode(servers, order)
	if err != nil {
		return nil, err
	}
	res := &MergeResult{}
	var errs []error
	for i := 0; i+1 < len(add.Content); i += 2 {
		k, v := add.Content[i], add.Content[i+1]
		j := -1
		for i := 0; i+1 < len(block.Content); i += 2 {
			if block.Content[i].Value == k.Value {
				j = i
			}
		}
		switch {
		case j < 0:
			block.Content = append(block.Content, k, v)
			res.Added = append(res.Added, k.Value)
		case sameServer(block.Content[j+1], v):
			res.Same = append(res.Same, k.Value)
		case mode == MergeSkip:
			res.Skipped = append(res.Skipped, k.Value)
		case mode == MergeOverwrite:
			block.Content[j+1] = v
			res.Replaced = append(res.Replaced, k.Value)
		default:
			old := block.Content[j]
			errs = append(errs, &Error{Pos: Pos{File: name, Line: old.Line, Col: old.Column}, Field: "servers." + k.Value, Err: ErrNameClash,
				Msg: "already defined, otherwise than the imported server; nothing was merged: keep this one with --skip-existing, " +
					"replace it with --overwrite, or rename it here and import again"})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if res.Out, err = encodeYAML(doc); err != nil {
		return nil, err
	}
	return res, nil
}

// sameServer reports whether the config's entry old defines the same
// server as new, an entry serversNode made: both as written, with the
// defaults left out.
func sameServer(old, new *yaml.Node) bool {
	var s Server
	if old.Decode(&s) != nil {
		return false
	}
	n, err := serversNode(map[string]*Server{"s": &s}, nil)
	if err != nil {
		return false
	}
	a, err1 := encodeYAML(n.Content[1])
	b, err2 := encodeYAML(new)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

func serversNode(servers map[string]*Server, order []string) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	var names []string
	seen := map[string]bool{}
	for _, name := range slices.Concat(order, slices.Sorted(maps.Keys(servers))) {
		if servers[name] != nil && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, name := range names {
		s := *servers[name]
		if s.Start == "eager" {
			s.Start = "" // the default
		}
		var v yaml.Node
		if err := v.Encode(&s); err != nil {
			return nil, fmt.Errorf("marshal server %s: %w", name, err)
		}
		n.Content = append(n.Content, strNode(name), &v)
	}
	return n, nil
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func encodeYAML(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	return bytes.TrimPrefix(buf.Bytes(), []byte("---\n")), nil
}
