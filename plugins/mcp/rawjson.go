package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/skillgate/skillgate/internal/jsonscan"
)

// field is one member of a JSON object, its value already encoded.
type field struct {
	key string
	val json.RawMessage
}

// withFields returns obj (a JSON object, or empty for {}) with fields set at
// its top level. The other members keep their bytes; when none of the keys
// is present yet, obj is not even decoded.
func withFields(obj json.RawMessage, fields ...field) (json.RawMessage, error) {
	obj = bytes.TrimSpace(obj)
	if len(obj) == 0 || string(obj) == "null" {
		obj = json.RawMessage(`{}`)
	}
	if obj[0] != '{' {
		return nil, errNotObject
	}
	present := false
	var kb [64]byte
	for _, f := range fields {
		if bytes.Contains(obj, jsonscan.AppendString(kb[:0], f.key)) {
			present = true
			break
		}
	}
	if !present {
		rest := bytes.TrimSpace(obj[1:])
		out := make([]byte, 0, len(obj)+64)
		out = append(out, '{')
		for i, f := range fields {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(append(jsonscan.AppendString(out, f.key), ':'), f.val...)
		}
		if len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, rest...), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errNotObject
	}
	for _, f := range fields {
		m[f.key] = f.val
	}
	return json.Marshal(m)
}

// withMeta returns params with fields set inside its _meta object.
func withMeta(params json.RawMessage, fields ...field) (json.RawMessage, error) {
	if len(fields) == 0 {
		return params, nil
	}
	if !bytes.Contains(params, []byte(`"_meta"`)) {
		meta := []byte{'{'}
		for i, f := range fields {
			if i > 0 {
				meta = append(meta, ',')
			}
			meta = append(append(jsonscan.AppendString(meta, f.key), ':'), f.val...)
		}
		return withFields(params, field{"_meta", append(meta, '}')})
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errNotObject
	}
	meta, err := withFields(m["_meta"], fields...)
	if err != nil {
		return nil, err
	}
	m["_meta"] = meta
	return json.Marshal(m)
}

// mustJSON encodes v, which must be encodable.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
