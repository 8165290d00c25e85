package schema

import (
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Decoder validates JSON objects against a schema and decodes them into one
// struct type. It is immutable and safe for concurrent use.
//
// When the schema is flat (an open object whose properties each declare
// just a type: string, number, integer or boolean) and the struct's fields
// are those properties (strings, bools, numbers, or pointers to them),
// validation and decoding share one pass over the bytes, and each string is
// copied once, into storage no larger than its JSON form. Keys then match
// property names exactly: a key that differs from a declared name only in
// case is an undeclared key, which the open schema ignores. A declared
// property given twice is a violation (`duplicate property "x"`), since
// parsers disagree on which copy wins.
//
// Other pairs are validated by the validator and then decoded by
// encoding/json under the same rules for top-level keys: encoding/json
// matches keys without regard to case, so it is handed only the members
// whose keys are declared names, and a declared property given twice is a
// violation. Keys of nested objects match as encoding/json matches them.
type Decoder struct {
	schema   *Schema
	typ      reflect.Type
	fields   []field  // declaration order; nil when the one-pass decoding does not apply
	declared []string // the top-level property names, in declaration order
}

// field is a declared property and the struct field that receives it.
type field struct {
	name     string
	index    int          // in the struct
	typ      reflect.Type // the value's type: the element of a pointer field
	pointer  bool
	want     string // the schema type
	required bool
}

// maxFields bounds the one-pass decoding: seen properties are a bit set.
const maxFields = 64

// Decoder returns a decoder of s's instances into t, a struct type (or a
// pointer to one).
func (s *Schema) Decoder(t reflect.Type) (*Decoder, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("schema: %v is not a struct type", t)
	}
	d := &Decoder{schema: s, typ: t, fields: flatFields(s, t)}
	if d.fields == nil && s.order != nil {
		d.declared = make([]string, len(s.order.index))
		for name, n := range s.order.index {
			d.declared[n] = name
		}
	}
	return d, nil
}

// flatFields pairs the schema's properties with t's fields, or returns nil
// if the pair is not flat.
func flatFields(s *Schema, t reflect.Type) []field {
	props, required, ok := flatProperties(s.doc)
	if !ok || len(props) > maxFields || s.order == nil {
		return nil
	}
	byName := map[string]field{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil // promoted fields follow rules of their own
		}
		if !sf.IsExported() {
			continue
		}
		name, opts, hasOpts := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" && !hasOpts {
			continue
		}
		if opts != "" && opts != "omitempty" && opts != "omitzero" {
			return nil // ",string" and the like change what a value means
		}
		name = cmp.Or(name, sf.Name)
		f, ok := fieldFor(sf.Type, props[name])
		if _, dup := byName[name]; dup || !ok {
			return nil
		}
		f.name, f.index, f.required = name, i, slices.Contains(required, name)
		byName[name] = f
	}
	if len(byName) != len(props) {
		return nil
	}
	fields := make([]field, len(props))
	for name, f := range byName {
		n, ok := s.order.index[name]
		if !ok || n >= len(fields) {
			return nil
		}
		fields[n] = f
	}
	for _, name := range required {
		if _, ok := byName[name]; !ok {
			return nil
		}
	}
	return fields
}

// flatProperties reads a flat schema document: each property's type, and
// the required names. Keywords beyond type and annotations make it not flat.
func flatProperties(doc []byte) (map[string]string, []string, bool) {
	var root map[string]json.RawMessage
	if json.Unmarshal(doc, &root) != nil {
		return nil, nil, false
	}
	var (
		typ      string
		props    map[string]map[string]json.RawMessage
		required []string
	)
	for key, raw := range root {
		var err error
		switch key {
		case "type":
			err = json.Unmarshal(raw, &typ)
		case "properties":
			err = json.Unmarshal(raw, &props)
		case "required":
			err = json.Unmarshal(raw, &required)
		case "title", "description":
		default:
			return nil, nil, false
		}
		if err != nil {
			return nil, nil, false
		}
	}
	if typ != "object" {
		return nil, nil, false
	}
	types := make(map[string]string, len(props))
	for name, keywords := range props {
		for key, raw := range keywords {
			switch key {
			case "type":
				var t string
				if json.Unmarshal(raw, &t) != nil {
					return nil, nil, false
				}
				types[name] = t
			case "title", "description":
			default:
				return nil, nil, false
			}
		}
	}
	return types, required, true
}

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// fieldFor checks that a field of type t decodes a value of schema type
// want exactly as encoding/json would.
func fieldFor(t reflect.Type, want string) (field, bool) {
	f := field{typ: t, want: want}
	if t.Kind() == reflect.Pointer {
		f.typ, f.pointer = t.Elem(), true
	}
	if pt := reflect.PointerTo(f.typ); pt.Implements(unmarshaler) || pt.Implements(textUnmarshaler) {
		return field{}, false
	}
	var kindWant string
	switch f.typ.Kind() {
	case reflect.String:
		kindWant = "string"
	case reflect.Bool:
		kindWant = "boolean"
	case reflect.Float32, reflect.Float64:
		kindWant = "number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		kindWant = "integer"
	}
	return f, kindWant != "" && kindWant == want
}

// Decode validates raw and stores it in the struct dst points to. It
// returns a *ValidationError naming every violation, an error if raw is not
// JSON, or a *json.UnmarshalTypeError for a valid value the field cannot
// hold (say 1e999 for a float64, or 2.0 for an int).
func (d *Decoder) Decode(raw []byte, dst any) error {
	_, err := d.DecodeInPlace(raw, dst, nil)
	return err
}

// DecodeInPlace is Decode for raw that the caller gives up: it neither
// reads nor writes raw again, for as long as the decoded strings live. A
// string property for which inPlace(name, size) is true (size is the
// length of its JSON literal without the quotes) is decoded into raw's
// own storage instead of into a copy, since unescaping only shrinks: a
// string that is its own decoding (no escapes, valid UTF-8) shares raw's
// bytes as they are, one with escapes is rewritten where it stands, and
// the returned spans say where raw no longer holds JSON. Only a
// successful decode writes into raw; on error raw is as it was. With
// inPlace nil, or for a decoder that is not one-pass (see Decoder), it
// copies as Decode does and returns no spans.
func (d *Decoder) DecodeInPlace(raw []byte, dst any, inPlace func(name string, size int) bool) ([]Span, error) {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Type() != d.typ {
		return nil, fmt.Errorf("schema: cannot decode into %T, want *%v", dst, d.typ)
	}
	if d.fields == nil {
		return nil, d.decodeValidated(raw, dst)
	}
	s := scanner{b: raw}
	if s.peek() != '{' {
		// Not an object, or not JSON: the validator words either.
		return nil, d.schema.Validate(raw)
	}
	st := decodeState{d: d, s: &s, out: v.Elem(), inPlace: inPlace}
	if !st.object() {
		return nil, d.schema.syntaxError(raw)
	}
	if s.skipSpace(); s.i != len(raw) {
		return nil, d.schema.syntaxError(raw)
	}
	if violations := st.violations(); len(violations) > 0 {
		return nil, &ValidationError{Violations: violations}
	}
	if st.decodeErr != nil {
		return nil, st.decodeErr
	}
	return st.finishInPlace(), nil
}

// decodeValidated validates raw and decodes the members whose keys are
// declared names with encoding/json: a case variant such as "FILE_PATH"
// would otherwise fill the field of "file_path" with a value the validator
// never judged.
func (d *Decoder) decodeValidated(raw []byte, dst any) error {
	err := d.schema.Validate(raw)
	var ve *ValidationError
	if err != nil && !errors.As(err, &ve) {
		return err // not JSON
	}
	declared, twice := d.declaredMembers(raw)
	if len(twice) > 0 {
		var violations []string
		if ve != nil {
			violations = slices.Clone(ve.Violations)
		}
		for _, name := range twice {
			violations = append(violations, "duplicate property "+strconv.Quote(name))
		}
		return &ValidationError{Violations: violations}
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(declared, dst)
}

// declaredMembers returns raw, a JSON object, without the members whose
// keys are not declared names (raw itself if there are none), and the
// declared names given more than once. raw is returned as it is when it is
// not an object.
func (d *Decoder) declaredMembers(raw []byte) (declared []byte, twice []string) {
	s := scanner{b: raw, valid: true}
	if !s.consume('{') || s.consume('}') {
		return raw, nil
	}
	seen := make([]int, len(d.declared))
	var kept [][2]int // the spans of the members to keep
	dropped := false
	for {
		s.skipSpace()
		start := s.i
		key, ok := s.key()
		if !ok || !s.consume(':') || !s.skipValue(1) {
			return raw, nil // not JSON: the validator has said so
		}
		if n := slices.Index(d.declared, string(key)); n >= 0 {
			seen[n]++
			kept = append(kept, [2]int{start, s.i})
		} else {
			dropped = true
		}
		if !s.consume(',') {
			break
		}
	}
	for n, count := range seen {
		if count > 1 {
			twice = append(twice, d.declared[n])
		}
	}
	if !dropped {
		return raw, twice
	}
	out := []byte{'{'}
	for i, span := range kept {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, raw[span[0]:span[1]]...)
	}
	return append(out, '}'), twice
}

// syntaxError is the validator's wording of raw's syntax error.
func (s *Schema) syntaxError(raw []byte) error {
	if _, err := parse(raw); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

// decodeState is one Decode: the fields seen, given twice or given a value
// of the wrong type (bit n is fields[n]), and the first value a field could
// not hold.
type decodeState struct {
	d                     *Decoder
	s                     *scanner
	out                   reflect.Value
	seen, twice, mistyped uint64
	decodeErr             error

	inPlace func(name string, size int) bool // DecodeInPlace's choice
	pending []pendingString                  // chosen strings, decoded once raw is known valid
}

// object consumes the root object from its opening brace.
func (st *decodeState) object() bool {
	s := st.s
	s.i++
	if s.consume('}') {
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		n, ok := st.key()
		if !ok || !s.consume(':') {
			return false
		}
		if n < 0 {
			ok = s.skipValue(1)
		} else {
			ok = st.value(n)
		}
		if !ok {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// key consumes a key and returns the index of the field it names exactly,
// or -1.
func (st *decodeState) key() (int, bool) {
	key, ok := st.s.key()
	if !ok {
		return 0, false
	}
	for i := range st.d.fields {
		if st.d.fields[i].name == string(key) {
			return i, true
		}
	}
	return -1, true
}

// value consumes the value of fields[n] and stores it if it fits.
func (st *decodeState) value(n int) bool {
	f, s := &st.d.fields[n], st.s
	bit := uint64(1) << n
	if st.seen&bit != 0 {
		st.twice |= bit
	}
	st.seen |= bit
	fits := false
	switch c := s.peek(); {
	case c == '"' && f.want == "string":
		if !st.str(f) {
			return false
		}
		fits = true
	case (c == 't' || c == 'f') && f.want == "boolean":
		b := c == 't'
		if !s.literal(strconv.FormatBool(b)) {
			return false
		}
		st.target(f).SetBool(b)
		fits = true
	case c == '-' || '0' <= c && c <= '9':
		lit, ok := s.number()
		if !ok {
			return false
		}
		fits = st.number(f, lit)
	default:
		if !s.skipValue(1) {
			return false
		}
	}
	if !fits {
		st.mistyped |= bit
	}
	return true
}

// number stores a number literal and reports whether the schema type
// admits it; a value the field cannot hold is recorded as decodeErr.
func (st *decodeState) number(f *field, lit []byte) bool {
	switch f.want {
	case "number":
	case "integer":
		if r, ok := new(big.Rat).SetString(string(lit)); !ok || !r.IsInt() {
			return false
		}
	default:
		return false
	}
	v := st.target(f)
	var overflow bool
	switch f.typ.Kind() {
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(string(lit), f.typ.Bits())
		overflow = err != nil || v.OverflowFloat(x)
		if !overflow {
			v.SetFloat(x)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, err := strconv.ParseUint(string(lit), 10, 64)
		overflow = err != nil || v.OverflowUint(x)
		if !overflow {
			v.SetUint(x)
		}
	default:
		x, err := strconv.ParseInt(string(lit), 10, 64)
		overflow = err != nil || v.OverflowInt(x)
		if !overflow {
			v.SetInt(x)
		}
	}
	if overflow && st.decodeErr == nil {
		st.decodeErr = &json.UnmarshalTypeError{Value: "number " + string(lit), Type: f.typ, Struct: st.d.typ.Name(), Field: f.name}
	}
	return true
}

// target is the settable value of f, allocating a pointer field's value.
func (st *decodeState) target(f *field) reflect.Value {
	v := st.out.Field(f.index)
	if !f.pointer {
		return v
	}
	if v.IsNil() {
		v.Set(reflect.New(f.typ))
	}
	return v.Elem()
}

// violations words what the pass found, in declaration order: at one
// property, missing, then of the wrong type, then given twice.
func (st *decodeState) violations() []string {
	if st.mistyped == 0 && st.twice == 0 && !st.missing() {
		return nil
	}
	var out []string
	for n, f := range st.d.fields {
		bit := uint64(1) << n
		name := strconv.Quote(f.name)
		if f.required && st.seen&bit == 0 {
			out = append(out, "missing required property "+name)
		}
		if st.mistyped&bit != 0 {
			out = append(out, name+" must be "+typeWords([]string{f.want}))
		}
		if st.twice&bit != 0 {
			out = append(out, "duplicate property "+name)
		}
	}
	return out
}

func (st *decodeState) missing() bool {
	for n, f := range st.d.fields {
		if f.required && st.seen&(uint64(1)<<n) == 0 {
			return true
		}
	}
	return false
}
