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

// Merge adds servers to the servers: block of a skillgate.yaml held in
// cfgYAML, read from the file called name (errors name it), keeping its
// comments, and returns the new text. A name already in the file is an
// error wrapping ErrNameClash unless overwrite is true, in which case the
// entry is replaced. yaml.v3 re-indents the file to two spaces. A file of
// more than one YAML document is an error, as Parse would read only the
// first.
func Merge(cfgYAML []byte, name string, servers map[string]*Server, order []string, overwrite bool) ([]byte, error) {
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
		case !overwrite:
			old := block.Content[j]
			errs = append(errs, &Error{Pos: Pos{File: name, Line: old.Line, Col: old.Column}, Field: "servers." + k.Value, Err: ErrNameClash,
				Msg: "already defined; rename the imported server, or import with --overwrite to replace it"})
		default:
			block.Content[j+1] = v
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return encodeYAML(doc)
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
