package runtime

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/gordis-run/gordis/internal/schema"
)

// configType is a plugin's config type with its schema, derived once per Go
// type and shared by every plugin that uses it.
type configType struct {
	typ    reflect.Type
	schema *schema.Schema // nil when typ is not a struct (or pointer to one)
	err    error          // schema derivation failure, reported at Plugin()
}

var configTypes sync.Map // reflect.Type → *configType

func configTypeOf(t reflect.Type) *configType {
	if ct, ok := configTypes.Load(t); ok {
		return ct.(*configType)
	}
	ct := &configType{typ: t}
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() == reflect.Struct {
		ct.schema, ct.err = schema.For(t, schema.Options{})
	}
	actual, _ := configTypes.LoadOrStore(t, ct)
	return actual.(*configType)
}

// prepare turns what the host passed (nil, C, *C, map[string]any,
// json.RawMessage or []byte) into a validated C with defaults filled. A Go
// struct is marshalled first, so its zero `omitempty` fields count as absent
// and receive their defaults.
func (s *spec) prepare(in any) (any, error) {
	ct := s.config
	if ct == nil {
		return in, nil
	}
	if ct.err != nil {
		return nil, &ConfigError{Plugin: s.name, Err: ct.err}
	}
	if ct.typ.Kind() == reflect.Interface {
		return in, nil
	}
	if ct.schema == nil {
		if in == nil {
			return reflect.Zero(ct.typ).Interface(), nil
		}
		if reflect.TypeOf(in) == ct.typ {
			return in, nil
		}
	}
	raw, err := toJSON(in)
	if err != nil {
		return nil, &ConfigError{Plugin: s.name, Err: err}
	}
	if ct.schema != nil {
		if raw, err = ct.schema.WithDefaults(raw); err != nil {
			return nil, &ConfigError{Plugin: s.name, Err: err}
		}
		if err := ct.schema.Validate(raw); err != nil {
			return nil, &ConfigError{Plugin: s.name, Err: err}
		}
	}
	out := reflect.New(ct.typ)
	if err := json.Unmarshal(raw, out.Interface()); err != nil {
		return nil, &ConfigError{Plugin: s.name, Err: err}
	}
	return out.Elem().Interface(), nil
}

func toJSON(in any) ([]byte, error) {
	switch v := in.(type) {
	case nil:
		return []byte("{}"), nil
	case json.RawMessage:
		return nonEmpty(v), nil
	case []byte:
		return nonEmpty(v), nil
	}
	return json.Marshal(in)
}

func nonEmpty(raw []byte) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}")
	}
	return raw
}
