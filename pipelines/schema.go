package pipelines

import (
	"fmt"
	"math"
	"reflect"
	"sort"

	"github.com/expr-lang/expr/types"
)

// schemaType is the expression type of values that fit JSON Schema s, as
// far as the checker can use it: objects with properties are strict unless
// additionalProperties allows more, unions and the unknown are any.
func schemaType(s any) types.Type {
	m, ok := s.(map[string]any)
	if !ok {
		return types.Any
	}
	t, _ := m["type"].(string)
	switch t {
	case "string":
		return types.String
	case "integer":
		return types.Int
	case "number":
		return types.Float64
	case "boolean":
		return types.Bool
	case "array":
		return types.Array(schemaType(m["items"]))
	case "object":
		props, ok := m["properties"].(map[string]any)
		if !ok {
			return types.Map{types.Extra: types.Any}
		}
		out := types.Map{}
		for k, v := range props {
			out[k] = schemaType(v)
		}
		if ap, has := m["additionalProperties"]; has && ap != false {
			out[types.Extra] = schemaType(ap)
		}
		return out
	}
	return types.Any
}

// coerce checks v against schema s, the subset the expression types rely
// on (type, properties, required, items, default), fills in defaults and
// turns whole numbers into ints where s says integer. It returns the
// first mismatch.
func coerce(s any, v any, path string) (any, error) {
	m, ok := s.(map[string]any)
	if !ok {
		return v, nil
	}
	where := path
	if where == "" {
		where = "the arguments"
	}
	if v == nil {
		if d, ok := m["default"]; ok {
			return d, nil
		}
	}
	t, _ := m["type"].(string)
	switch t {
	case "string":
		if _, ok := v.(string); !ok {
			return nil, fmt.Errorf("%w: %s must be a string, got %s", ErrInvalidArguments, where, typeOf(v))
		}
	case "number":
		if _, ok := v.(float64); !ok {
			return nil, fmt.Errorf("%w: %s must be a number, got %s", ErrInvalidArguments, where, typeOf(v))
		}
	case "integer":
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, fmt.Errorf("%w: %s must be a whole number, got %s", ErrInvalidArguments, where, describe(v))
		}
		return int(f), nil
	case "boolean":
		if _, ok := v.(bool); !ok {
			return nil, fmt.Errorf("%w: %s must be true or false, got %s", ErrInvalidArguments, where, typeOf(v))
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s must be a list, got %s", ErrInvalidArguments, where, typeOf(v))
		}
		if items, ok := m["items"]; ok {
			for i, x := range l {
				c, err := coerce(items, x, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				l[i] = c
			}
		}
	case "object":
		if v == nil && path == "" {
			v = map[string]any{}
		}
		o, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s must be an object, got %s", ErrInvalidArguments, where, typeOf(v))
		}
		props, _ := m["properties"].(map[string]any)
		for _, r := range asList(m["required"]) {
			if k, ok := r.(string); ok {
				if _, has := o[k]; !has {
					if _, hasDefault := asMap(props[k])["default"]; !hasDefault {
						return nil, fmt.Errorf("%w: %s is required", ErrInvalidArguments, join(path, k))
					}
				}
			}
		}
		if props != nil && m["additionalProperties"] == false {
			for k := range o {
				if _, ok := props[k]; !ok {
					return nil, fmt.Errorf("%w: %s is not a known argument; known are %v", ErrInvalidArguments, join(path, k), sortedKeys(props))
				}
			}
		}
		for k, ps := range props {
			x, has := o[k]
			if !has {
				if d, ok := asMap(ps)["default"]; ok {
					o[k] = d
				}
				continue
			}
			c, err := coerce(ps, x, join(path, k))
			if err != nil {
				return nil, err
			}
			o[k] = c
		}
		return o, nil
	}
	return v, nil
}

func describe(v any) string {
	if f, ok := v.(float64); ok {
		return fmt.Sprint(f)
	}
	return typeOf(v)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// outSchema derives the JSON Schema of what t evaluates to: exact for
// constants and text, from the checker's type for a lone expression (which
// may also be null, as a skipped step's outputs are), and {} when unknown.
func outSchema(t *tmpl) map[string]any {
	switch t.kind {
	case tConst:
		return constSchema(t.val)
	case tInterp:
		return map[string]any{"type": "string"}
	case tExpr:
		if name := jsonTypeName(t.prog.typ); name != "" {
			return map[string]any{"type": []any{name, "null"}}
		}
		return map[string]any{}
	case tList:
		return map[string]any{"type": "array"}
	case tMap:
		props := map[string]any{}
		req := make([]any, 0, len(t.keys))
		for i, k := range t.keys {
			props[k] = outSchema(t.items[i])
			req = append(req, k)
		}
		return map[string]any{"type": "object", "properties": props, "required": req}
	}
	return map[string]any{}
}

func constSchema(v any) map[string]any {
	switch v.(type) {
	case nil:
		return map[string]any{"type": "null"}
	case string:
		return map[string]any{"type": "string"}
	case bool:
		return map[string]any{"type": "boolean"}
	case int:
		return map[string]any{"type": "integer"}
	case float64:
		return map[string]any{"type": "number"}
	case []any:
		return map[string]any{"type": "array"}
	case map[string]any:
		return map[string]any{"type": "object"}
	}
	return map[string]any{}
}

func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return ""
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map:
		return "object"
	}
	return ""
}
