// Package schema derives JSON Schemas from Go structs (invopop/jsonschema),
// validates JSON against them (santhosh-tekuri/jsonschema/v6) with every
// violation named in plain words, and fills defaults. It is shared by the
// runtime (plugin configs) and the registry (tool arguments).
//
// API CONTRACT STUB: the registry implementer owns this package.
package schema

import "reflect"

// Schema is a compiled schema for one Go type.
type Schema struct{ _ [0]func() }

// Options adjust derivation.
type Options struct {
	// Open leaves additionalProperties unset (unknown keys are accepted).
	Open bool
}

// For derives the flat (no $ref, no $schema/$id), ordered schema of struct
// type t and compiles it.
func For(t reflect.Type, opts Options) (*Schema, error) { panic("unimplemented") }

// JSON returns the schema document exactly as sent to a model.
func (s *Schema) JSON() []byte { panic("unimplemented") }

// Validate checks raw JSON. It returns a *ValidationError naming every
// violation, or an error if raw is not JSON.
func (s *Schema) Validate(raw []byte) error { panic("unimplemented") }

// WithDefaults returns raw (a JSON object) with missing properties set to
// their schema defaults.
func (s *Schema) WithDefaults(raw []byte) ([]byte, error) { panic("unimplemented") }

// ValidationError lists violations in plain words, e.g.
// `missing required property "file_path"`, `"offset" must be a number`,
// `"readLimit" must be a positive integer`.
type ValidationError struct {
	Violations []string
}

// Error joins the violations with "; ".
func (e *ValidationError) Error() string { panic("unimplemented") }
