// Package schema derives JSON Schemas from Go structs (invopop/jsonschema),
// validates JSON against them (santhosh-tekuri/jsonschema/v6) with every
// violation named in plain words, and fills defaults. It is shared by the
// runtime (plugin configs) and the registry (tool arguments).
package schema

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled schema for one Go type. It is immutable and safe for
// concurrent use.
type Schema struct {
	doc      []byte
	compiled *validator.Schema
	order    *level
}

// Options adjust derivation.
type Options struct {
	// Open leaves additionalProperties unset (unknown keys are accepted).
	Open bool
	// Descriptions replace the struct tags' descriptions of top-level
	// properties, by JSON name: for text that depends on configuration.
	Descriptions map[string]string
}

// For derives the flat (no $ref, no $schema/$id), ordered schema of struct
// type t and compiles it.
func For(t reflect.Type, opts Options) (s *Schema, err error) {
	if t == nil {
		return nil, errors.New("schema: nil type")
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("schema: %v is not a struct type", t)
	}
	// The reflector panics on types it cannot describe (channels, funcs).
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("schema: cannot derive a schema for %v: %v", t, p)
		}
	}()
	r := jsonschema.Reflector{
		Anonymous:                 true,
		ExpandedStruct:            true,
		DoNotReference:            true,
		AllowAdditionalProperties: opts.Open,
	}
	derived := r.ReflectFromType(t)
	derived.Version = ""
	derived.ID = ""
	for name, text := range opts.Descriptions {
		p, ok := derived.Properties.Get(name)
		if !ok {
			return nil, fmt.Errorf("schema: %v has no property %q to describe", t, name)
		}
		p.Description = text
	}
	raw, err := json.Marshal(derived)
	if err != nil {
		return nil, fmt.Errorf("schema: encoding the schema of %v: %w", t, err)
	}
	return compile(unescapeHTML(raw))
}

// Compile compiles a hand-written schema document (draft 2020-12). JSON
// returns doc as given.
func Compile(doc []byte) (*Schema, error) {
	return compile(slices.Clone(doc))
}

func compile(doc []byte) (*Schema, error) {
	parsed, err := validator.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema: not a schema document: %w", err)
	}
	const url = "mem://schema.json"
	c := validator.NewCompiler()
	c.AssertFormat() // a declared format is a constraint, not a comment
	if err := c.AddResource(url, parsed); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	order, err := orderOf(json.NewDecoder(bytes.NewReader(doc)))
	if err != nil {
		return nil, fmt.Errorf("schema: not a schema document: %w", err)
	}
	return &Schema{doc: doc, compiled: compiled, order: order}, nil
}

// JSON returns the schema document exactly as sent to a model. The caller
// must not modify it.
func (s *Schema) JSON() []byte { return s.doc }

// Validate checks raw JSON. It returns a *ValidationError naming every
// violation, or an error if raw is not JSON.
func (s *Schema) Validate(raw []byte) error {
	v, err := parse(raw)
	if err != nil {
		return err
	}
	return s.validate(v)
}

// ValidationError lists violations in plain words, e.g.
// `missing required property "file_path"`, `"offset" must be a number`,
// `"readLimit" must be a positive integer`.
//
// Violations are ordered by where they occur, following the order in which
// the schema declares properties (a missing property counts as occurring at
// its own position); undeclared properties come after declared ones, by
// name; array items by index. Violations at the same place are ordered
// required, type, then the other keywords, then alphabetically. Duplicates
// are dropped.
type ValidationError struct {
	Violations []string
}

// Error joins the violations with "; ".
func (e *ValidationError) Error() string { return strings.Join(e.Violations, "; ") }

// parse reads one JSON value, keeping numbers exact (json.Number).
func parse(raw []byte) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("invalid JSON: empty input")
	}
	v, err := validator.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	return v, nil
}

// unescapeHTML undoes encoding/json's escaping of <, > and & inside strings,
// so a model reads descriptions as written. Other escapes are kept.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		// b[i] starts an escape sequence (encoding/json only writes
		// backslashes inside strings, and always as an escape).
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, b[i], b[i+1]), i+1
	}
	return out
}

// level records the declared property order of one object schema, and the
// same for nested objects and array items, to sort violations.
type level struct {
	index map[string]int
	props map[string]*level
	items *level
}

// orderOf reads the declared property order of the schema document that
// dec is positioned at (Go maps, including the compiled schema's, forget it).
func orderOf(dec *json.Decoder) (*level, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, skipRest(dec, tok) // a boolean schema, or not a schema
	}
	l := &level{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch key {
		case "properties":
			if l.index, l.props, err = propertiesOf(dec); err != nil {
				return nil, err
			}
		case "items":
			if l.items, err = orderOf(dec); err != nil {
				return nil, err
			}
		default:
			if err := skipValue(dec); err != nil {
				return nil, err
			}
		}
	}
	_, err = dec.Token() // '}'
	return l, err
}

func propertiesOf(dec *json.Decoder) (map[string]int, map[string]*level, error) {
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, cmp.Or(err, skipRest(dec, tok))
	}
	index, props := map[string]int{}, map[string]*level{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := key.(string)
		index[name] = len(index)
		if props[name], err = orderOf(dec); err != nil {
			return nil, nil, err
		}
	}
	_, err = dec.Token() // '}'
	return index, props, err
}

// skipValue consumes the next value.
func skipValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	return skipRest(dec, tok)
}

// skipRest consumes the rest of a value whose first token was tok.
func skipRest(dec *json.Decoder, tok json.Token) error {
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return nil
	}
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// WithDefaults returns raw (a JSON object) with missing properties set to
// their schema defaults, at the top level and inside nested objects that are
// present. An absent object property stays absent unless it has a default
// itself: for a pointer field, absence may mean "off". A value that is not an
// object is returned unchanged (Validate reports it).
func (s *Schema) WithDefaults(raw []byte) ([]byte, error) {
	v, err := parse(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok || !fillDefaults(obj, s.compiled) {
		return raw, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, fmt.Errorf("schema: encoding defaults: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// fillDefaults fills obj in place and reports whether it changed anything.
func fillDefaults(obj map[string]any, s *validator.Schema) bool {
	changed := false
	for name, ps := range s.Properties {
		v, present := obj[name]
		switch {
		case present:
			if child, ok := v.(map[string]any); ok && fillDefaults(child, ps) {
				changed = true
			}
		case ps.Default != nil:
			obj[name] = *ps.Default
			changed = true
		}
	}
	return changed
}
