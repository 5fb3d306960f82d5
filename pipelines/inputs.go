package pipelines

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"gopkg.in/yaml.v3"
)

// The inputs schema is a real JSON Schema (draft 2020-12 unless $schema
// says otherwise): the loader checks it, keyword by keyword and against
// the metaschema, and each call's arguments are validated with it.

// schemaKeywords are the keywords of JSON Schema 2020-12 (and the draft-07
// ones it replaced). Any other key of a schema is a typo, unless it starts
// with x-.
var schemaKeywords = []string{
	"$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
	"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items",
	"contains", "properties", "patternProperties", "additionalProperties", "propertyNames",
	"unevaluatedItems", "unevaluatedProperties",
	"type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
	"maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
	"maxProperties", "minProperties", "required", "dependentRequired",
	"format", "contentEncoding", "contentMediaType", "contentSchema",
	"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
	"definitions", "dependencies", "additionalItems", "$recursiveRef", "$recursiveAnchor",
}

// Keywords whose value is a schema, a mapping of names to schemas, or a
// list of schemas.
var (
	schemaValued = []string{"not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames",
		"unevaluatedItems", "unevaluatedProperties", "contentSchema", "additionalItems"}
	schemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	schemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	simpleTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}
)

// inputsSchema checks the inputs schema v, written at n, and compiles it.
// It reports every problem with its position; nil means there were some.
func (d *decoder) inputsSchema(n *yaml.Node, v map[string]any) *jsonschema.Schema {
	before := len(d.errs)
	if hint := ghaInputs(d.resolve(n, "inputs")); hint != "" {
		d.fail(n, "inputs", "%s", hint)
		return nil
	}
	d.schemaKeywords(n, "inputs")
	if len(d.errs) > before {
		// The metaschema would only repeat them, less clearly; the
		// defaults of the properties that compile alone are still checked.
		d.propertyDefaults(n, v)
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		d.fail(n, "inputs", "the schema is not JSON: %v", err)
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		d.fail(n, "inputs", "the schema is not JSON: %v", err)
		return nil
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	const loc = "urn:skillgate:inputs"
	if err := c.AddResource(loc, doc); err != nil {
		d.fail(n, "inputs", "%v", err)
		return nil
	}
	s, err := c.Compile(loc)
	if err == nil {
		d.checkDefaults(n, c, loc, v, nil, nil)
		return s
	}
	defer d.propertyDefaults(n, v)
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	var re *jsonschema.InvalidRegexError
	switch {
	case errors.As(err, &sve) && errors.As(sve.Err, &ve):
		seen := map[string]bool{}
		for _, leaf := range leaves(ve) {
			at, field := schemaNode(n, leaf.InstanceLocation)
			msg := kindMessage(leaf.ErrorKind)
			if key := field + msg; !seen[key] {
				seen[key] = true
				d.fail(at, field, "not a valid JSON Schema: %s", msg)
			}
		}
	case errors.As(err, &re):
		_, frag, _ := strings.Cut(re.URL, "#")
		frag, _ = url.PathUnescape(frag)
		at, field := schemaNode(n, pointerTokens(frag))
		d.fail(at, field, "%q is not a valid regular expression: %v", re.Regex, re.Err)
	default:
		at, field := n, "inputs"
		var le *jsonschema.LoadURLError
		if errors.As(err, &le) {
			err = le.Err
			if r, f := findRef(n, "inputs", le.URL); r != nil {
				at, field = r, f
			}
		}
		d.fail(at, field, "%v", err)
	}
	return nil
}

// propertyDefaults checks the defaults of each property of the inputs
// schema v (at n) whose own schema compiles alone, for a schema that does
// not compile as a whole: its other problems do not hide theirs.
func (d *decoder) propertyDefaults(n *yaml.Node, v map[string]any) {
	props, _ := v["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		sub, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		b, err := json.Marshal(sub)
		if err != nil {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			continue
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(noLoader{})
		const loc = "urn:skillgate:inputs:property"
		if c.AddResource(loc, doc) != nil {
			continue
		}
		if _, err := c.Compile(loc); err == nil {
			d.checkDefaults(n, c, loc, sub, []string{"properties", name}, nil)
		}
	}
}

// checkDefaults checks each default written in schema m (at JSON pointer
// tokens path of the schema compiled by c as loc, which is at tokens at
// of the inputs schema at n) against the schema it is written in, so a
// default that could never be used is a load error and not a failure of
// every call that leaves it out.
func (d *decoder) checkDefaults(n *yaml.Node, c *jsonschema.Compiler, loc string, m map[string]any, at, path []string) {
	if def, ok := m["default"]; ok {
		d.checkDefault(n, c, loc, def, at, path)
	}
	sub := func(v any, toks ...string) {
		if sm, ok := v.(map[string]any); ok {
			d.checkDefaults(n, c, loc, sm, at, append(slices.Clone(path), toks...))
		}
	}
	for _, k := range sortedKeys(m) {
		switch v := m[k].(type) {
		case map[string]any:
			if slices.Contains(schemaMaps, k) {
				for _, name := range sortedKeys(v) {
					sub(v[name], k, name)
				}
			} else if slices.Contains(schemaValued, k) {
				sub(v, k)
			}
		case []any:
			if slices.Contains(schemaLists, k) {
				for i, item := range v {
					sub(item, k, strconv.Itoa(i))
				}
			}
		}
	}
}

// checkDefault checks def, the default of the schema at path, against it.
func (d *decoder) checkDefault(n *yaml.Node, c *jsonschema.Compiler, loc string, def any, at, path []string) {
	ptr := ""
	for _, tok := range path {
		ptr += "/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
	}
	s, err := c.Compile(loc + "#" + ptr)
	if err != nil {
		return // not a schema the metaschema knows as one, such as an enum's value
	}
	b, err := json.Marshal(def)
	if err != nil {
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return
	}
	err = s.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return
	}
	var msgs []string
	for _, leaf := range leaves(ve) {
		m := argumentMessage(leaf, defaultName)
		if !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	node, field := schemaNode(n, slices.Concat(at, path, []string{"default"}))
	d.fail(node, field, "the default %s does not fit its own schema, so every call that leaves it out would fail: %s; change the default or the schema",
		jsonText(def), strings.Join(msgs, "; "))
}

// defaultName names the part of a default at loc: "it", or "its
// cities[2].name".
func defaultName(loc []string) string {
	if len(loc) == 0 {
		return "it"
	}
	return "its " + argumentName(loc)
}

// findRef finds the $ref to u inside the schema at n.
func findRef(n *yaml.Node, field, u string) (*yaml.Node, string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "$ref" && v.Kind == yaml.ScalarNode && strings.HasPrefix(u, strings.Split(v.Value, "#")[0]) && v.Value != "" {
				return v, join(field, "$ref")
			}
			if r, f := findRef(v, join(field, k.Value), u); r != nil {
				return r, f
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if r, f := findRef(c, fmt.Sprintf("%s[%d]", field, i), u); r != nil {
				return r, f
			}
		}
	}
	return nil, ""
}

// noLoader refuses to load other documents: an inputs schema may $ref
// only inside itself, and loading must not read files or the network.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("the inputs schema refers to %s; it may only $ref its own $defs, such as #/$defs/name", u)
}

// schemaKeywords checks the keywords of schema n and of the schemas inside
// it: each must be known (or x-...), and type must name JSON types.
func (d *decoder) schemaKeywords(n *yaml.Node, field string) {
	if n = d.resolve(n, field); n == nil || n.Kind != yaml.MappingNode {
		return // booleans are schemas too; the metaschema judges the rest
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], d.resolve(n.Content[i+1], field)
		key, f := k.Value, join(field, k.Value)
		if v == nil || strings.HasPrefix(key, "x-") {
			continue
		}
		switch {
		case !slices.Contains(schemaKeywords, key):
			msg := "unknown JSON Schema keyword; " + suggest(key, schemaKeywords)
			if _, ok := closest(key, schemaKeywords); !ok {
				msg = "unknown JSON Schema keyword; write x-" + key + " for a note of your own"
			}
			if isPropertyLike(v) {
				msg += " (properties go under properties:)"
			}
			d.fail(k, f, "%s", msg)
		case key == "type":
			d.schemaType(v, f)
		case slices.Contains(schemaMaps, key) && v.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				d.schemaKeywords(v.Content[j+1], join(f, v.Content[j].Value))
			}
		case slices.Contains(schemaLists, key) && v.Kind == yaml.SequenceNode:
			for j, c := range v.Content {
				d.schemaKeywords(c, fmt.Sprintf("%s[%d]", f, j))
			}
		case slices.Contains(schemaValued, key):
			d.schemaKeywords(v, f)
		}
	}
}

// ghaInputs returns a hint when n is inputs written as GitHub Actions
// writes them (a mapping of names to {description, required, type,
// default}), not as JSON Schema; "" otherwise.
func ghaInputs(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		return ""
	}
	var names, required []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if strings.HasPrefix(k, "x-") {
			continue
		}
		if k == "type" || k == "properties" || k == "$ref" || v.Kind != yaml.MappingNode {
			return ""
		}
		like := false
		for j := 0; j+1 < len(v.Content); j += 2 {
			switch v.Content[j].Value {
			case "type", "description", "default":
				like = true
			case "required":
				like = true
				if v.Content[j+1].Value == "true" {
					required = append(required, k)
				}
			}
		}
		if !like {
			return ""
		}
		names = append(names, k)
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	slices.Sort(required)
	props := make([]string, len(names))
	for i, name := range names {
		props[i] = name + ": {type: ...}"
	}
	hint := "this looks like GitHub Actions inputs; write inputs as JSON Schema: type: object, properties: {" + strings.Join(props, ", ") + "}"
	if len(required) > 0 {
		hint += ", required: [" + strings.Join(required, ", ") + "]"
	}
	return hint + " (docs/PIPELINES.md: Differences from GitHub Actions)"
}

// isPropertyLike reports whether n looks like a property's schema, as when
// a property is written beside type: instead of under properties:.
func isPropertyLike(n *yaml.Node) bool {
	return n.Kind == yaml.MappingNode && len(n.Content) >= 2 && n.Content[0].Value == "type"
}

func (d *decoder) schemaType(n *yaml.Node, field string) {
	check := func(t *yaml.Node) {
		if t.Kind == yaml.ScalarNode && !slices.Contains(simpleTypes, t.Value) {
			d.fail(t, field, "%q is not a JSON Schema type; %s", t.Value, didYouMean(t.Value, simpleTypes, "the types"))
		}
	}
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			check(c)
		}
		return
	}
	check(n)
}

// schemaNode finds the node at path (JSON pointer tokens) inside the
// schema at n, as deep as it exists, and the field path to it.
func schemaNode(n *yaml.Node, path []string) (*yaml.Node, string) {
	field := "inputs"
	for _, tok := range path {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		next := (*yaml.Node)(nil)
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					next = n.Content[i+1]
				}
			}
			field = join(field, tok)
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
			field = fmt.Sprintf("%s[%s]", field, tok)
		}
		if next == nil {
			return n, field
		}
		n = next
	}
	return n, field
}

func pointerTokens(ptr string) []string {
	ptr = strings.TrimPrefix(ptr, "/")
	if ptr == "" {
		return nil
	}
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

// leaves returns the innermost errors of e: the ones that say what is
// wrong, not which part of the schema they come from.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// checkArguments validates v, the arguments after defaults, against s.
func checkArguments(s *jsonschema.Schema, v any) error {
	if s == nil {
		return nil
	}
	err := s.Validate(v)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	for _, leaf := range leaves(ve) {
		m := argumentMessage(leaf, argumentName)
		if !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) > 5 {
		msgs = append(msgs[:5], fmt.Sprintf("and %d more", len(msgs)-5))
	}
	return fmt.Errorf("%w: %s", ErrInvalidArguments, strings.Join(msgs, "; "))
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// argumentName is the argument at location loc, as in region or
// cities[2].name; "the arguments" for the whole object.
func argumentName(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		switch {
		case digits.MatchString(tok) && b.Len() > 0:
			b.WriteString("[" + tok + "]")
		case b.Len() > 0:
			b.WriteString("." + tok)
		default:
			b.WriteString(tok)
		}
	}
	if b.Len() == 0 {
		return "the arguments"
	}
	return b.String()
}

// argumentMessage says what is wrong with an argument, naming it with
// nameOf (argumentName, or defaultName for a schema's default).
func argumentMessage(e *jsonschema.ValidationError, nameOf func(loc []string) string) string {
	name := nameOf(e.InstanceLocation)
	child := func(prop string) string { return nameOf(append(slices.Clone(e.InstanceLocation), prop)) }
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var parts []string
		for _, m := range k.Missing {
			parts = append(parts, child(m)+" is required")
		}
		return strings.Join(parts, "; ")
	case *kind.AdditionalProperties:
		var parts []string
		for _, p := range k.Properties {
			parts = append(parts, child(p)+" is not a known argument")
		}
		return strings.Join(parts, "; ")
	case *kind.Type:
		return fmt.Sprintf("%s must be %s, got %s", name, strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		return fmt.Sprintf("%s must be one of %s, got %s", name, jsonList(k.Want), jsonText(k.Got))
	case *kind.Const:
		return fmt.Sprintf("%s must be %s, got %s", name, jsonText(k.Want), jsonText(k.Got))
	case *kind.MinLength:
		return fmt.Sprintf("%s must be at least %d characters long, got %d", name, k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d characters long, got %d", name, k.Want, k.Got)
	case *kind.Pattern:
		return fmt.Sprintf("%s must match the pattern %s, got %q", name, k.Want, k.Got)
	case *kind.Minimum:
		return fmt.Sprintf("%s must be at least %s, got %s", name, ratText(k.Want), ratText(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("%s must be at most %s, got %s", name, ratText(k.Want), ratText(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s must be more than %s, got %s", name, ratText(k.Want), ratText(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s must be less than %s, got %s", name, ratText(k.Want), ratText(k.Got))
	case *kind.MinItems:
		return fmt.Sprintf("%s must have at least %d items, got %d", name, k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("%s must have at most %d items, got %d", name, k.Want, k.Got)
	}
	return name + ": " + kindMessage(e.ErrorKind)
}

// kindMessage is the validator's own message for k.
func kindMessage(k jsonschema.ErrorKind) string {
	s := (&jsonschema.ValidationError{ErrorKind: k}).Error()
	s, _ = strings.CutPrefix(s, "at '': ")
	return s
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func jsonList(l []any) string {
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = jsonText(v)
	}
	return strings.Join(parts, ", ")
}

func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'f', -1, 64)
}
