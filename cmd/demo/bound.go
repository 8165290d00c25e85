package main

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxValueString bounds each string of a printed value: an edit of a
// 50 MB file would otherwise print its before and after in full, a line of
// over 100 MB.
const maxValueString = 4096

// errNoJSON words an encoding/json failure for the tool's author, without
// the Go type encoding/json names.
var errNoJSON = errors.New("the tool's value has no JSON form")

// printable is a tool's value as replay prints it: every string in it
// longer than maxValueString cut. The strings are cut in the value, in
// copies of just the parts that hold one, so that a write of 64 MiB is
// never encoded whole. A value whose long strings a copy cannot reach (see
// bounder) is encoded, and the strings of that text are cut instead.
func printable(v any) (any, error) {
	if out, ok := boundValue(v, maxValueString); ok {
		return out, nil
	}
	raw, err := marshalText(v)
	if err != nil {
		return nil, errNoJSON
	}
	raw, err = boundStrings(raw, maxValueString)
	return json.RawMessage(raw), err
}

// cutString cuts s, longer than limit bytes, at a character boundary at
// most limit bytes in (at limit in invalid UTF-8, with no character to
// keep whole), and says how many bytes it left out.
func cutString(s string, limit int) string {
	cut := limit
	for cut > limit-utf8.UTFMax+1 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if !utf8.RuneStart(s[cut]) {
		cut = limit
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

// boundValue returns v with every string encoding/json would print from it
// cut by cutString when longer than limit bytes, sharing every part that
// holds no such string. ok is false when a long string sits where a copy
// of its type cannot replace it: behind a json.Marshaler or
// encoding.TextMarshaler, in an unexported embedded struct, under a
// ",string" tag, as base64 of a []byte or as a key that is not a string.
func boundValue(v any, limit int) (out any, ok bool) {
	if v == nil {
		return nil, true
	}
	b := bounder{limit: limit}
	cut, changed, ok := b.cut(reflect.ValueOf(v), 0)
	switch {
	case !ok:
		return nil, false
	case changed:
		return cut.Interface(), true
	}
	return v, true
}

type bounder struct{ limit int }

// maxDepth stops the walk where encoding/json starts to look for cycles.
const maxDepth = 1000

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

// marshals reports whether encoding/json prints values of t with their own
// methods.
func marshals(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		p.Implements(marshalerType) || p.Implements(textMarshalerType)
}

// cut returns v with its long strings cut, and whether that changed it;
// ok false: see boundValue.
func (b *bounder) cut(v reflect.Value, depth int) (out reflect.Value, changed, ok bool) {
	if !v.IsValid() {
		return v, false, true
	}
	if depth > maxDepth {
		return v, false, false
	}
	t := v.Type()
	if marshals(t) {
		return v, false, b.opaqueShort(v)
	}
	switch t.Kind() {
	case reflect.String:
		if v.Len() <= b.limit || t == numberType {
			return v, false, true
		}
		return reflect.ValueOf(cutString(v.String(), b.limit)).Convert(t), true, true
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return v, false, true
		}
		elem, changed, ok := b.cut(v.Elem(), depth+1)
		if !changed || !ok {
			return v, false, ok
		}
		if t.Kind() == reflect.Pointer {
			out = reflect.New(t.Elem())
			out.Elem().Set(elem)
		} else {
			out = reflect.New(t).Elem()
			out.Set(elem)
		}
		return out, true, true
	case reflect.Struct:
		return b.cutStruct(v, depth)
	case reflect.Slice:
		if v.IsNil() {
			return v, false, true
		}
		if t.Elem().Kind() == reflect.Uint8 && !marshals(t.Elem()) {
			// Printed as one base64 string.
			return v, false, base64.StdEncoding.EncodedLen(v.Len()) <= b.limit
		}
		return b.cutElements(v, depth)
	case reflect.Array:
		return b.cutElements(v, depth)
	case reflect.Map:
		return b.cutMap(v, depth)
	}
	return v, false, true
}

// opaqueShort reports whether v, which encoding/json prints with its own
// method, prints no string longer than the limit.
func (b *bounder) opaqueShort(v reflect.Value) bool {
	if v.CanAddr() {
		v = v.Addr() // encoding/json calls pointer methods when it can
	}
	if !v.CanInterface() {
		return false
	}
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return true // printing fails the same way, and says so
	}
	cut, err := boundStrings(raw, b.limit)
	return err == nil && len(cut) == len(raw)
}

// cutStruct cuts the fields encoding/json prints: the exported ones, and
// the embedded ones whose fields it promotes.
func (b *bounder) cutStruct(v reflect.Value, depth int) (reflect.Value, bool, bool) {
	t := v.Type()
	var out reflect.Value // the copy, once a field changes
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if !sf.IsExported() && !sf.Anonymous || tag == "-" {
			continue
		}
		field, changed, ok := b.cut(v.Field(i), depth+1)
		if !ok {
			return v, false, false
		}
		if !changed {
			continue
		}
		_, opts, _ := strings.Cut(tag, ",")
		if !sf.IsExported() || slices.Contains(strings.Split(opts, ","), "string") || !v.CanInterface() {
			return v, false, false
		}
		if !out.IsValid() {
			out = copyOf(v)
		}
		out.Field(i).Set(field)
	}
	return outOr(out, v)
}

// copyOf is a settable copy of v, a struct, an array or a slice (a new one
// of the same elements).
func copyOf(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Slice {
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(out, v)
		return out
	}
	out := reflect.New(v.Type()).Elem()
	out.Set(v)
	return out
}

// outOr returns the cut copy out when there is one, else v unchanged.
func outOr(out, v reflect.Value) (reflect.Value, bool, bool) {
	if out.IsValid() {
		return out, true, true
	}
	return v, false, true
}

// cutElements cuts the elements of a slice or an array.
func (b *bounder) cutElements(v reflect.Value, depth int) (reflect.Value, bool, bool) {
	var out reflect.Value
	for i := range v.Len() {
		elem, changed, ok := b.cut(v.Index(i), depth+1)
		if !ok {
			return v, false, false
		}
		if !changed {
			continue
		}
		if !v.CanInterface() {
			return v, false, false
		}
		if !out.IsValid() {
			out = copyOf(v)
		}
		out.Index(i).Set(elem)
	}
	return outOr(out, v)
}

// cutMap cuts the values of a map and its string keys; keys of other kinds
// are short (integers) or printed by their own method.
func (b *bounder) cutMap(v reflect.Value, depth int) (reflect.Value, bool, bool) {
	if v.IsNil() {
		return v, false, true
	}
	t := v.Type()
	if kind := t.Key().Kind(); kind != reflect.String && (kind < reflect.Int || kind > reflect.Uintptr) {
		return v, false, b.opaqueShort(v)
	}
	each := func(set func(k, e reflect.Value)) (changed, ok bool) {
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			if k.Kind() == reflect.String && k.Len() > b.limit {
				k, changed = reflect.ValueOf(cutString(k.String(), b.limit)).Convert(t.Key()), true
			}
			e, c, ok := b.cut(it.Value(), depth+1)
			if !ok {
				return false, false
			}
			changed = changed || c
			set(k, e)
		}
		return changed, true
	}
	changed, ok := each(func(k, e reflect.Value) {})
	if !changed || !ok {
		return v, false, ok
	}
	if !v.CanInterface() {
		return v, false, false
	}
	out := reflect.MakeMapWithSize(t, v.Len())
	each(out.SetMapIndex)
	if out.Len() != v.Len() { // two long keys cut alike
		return v, false, false
	}
	return out, true, true
}

// marshalText is json.Marshal without escaping < > &: the texts are shown
// to people, and full of <path> tags.
func marshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// boundStrings cuts every string literal of the JSON document raw longer
// than limit bytes at a character boundary and ends it with the number of
// bytes left out. raw comes from encoding/json, so it is valid.
func boundStrings(raw []byte, limit int) ([]byte, error) {
	var out []byte // nil until a string is cut
	copied := 0    // raw[:copied] is in out
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		end := i + 1 // the closing quote
		for raw[end] != '"' {
			if raw[end] == '\\' {
				end++
			}
			end++
		}
		// An escape is longer than what it stands for, so a literal of at
		// most limit bytes holds a string of at most limit bytes.
		if end-i-1 > limit {
			var s string
			if err := json.Unmarshal(raw[i:end+1], &s); err != nil {
				return nil, err
			}
			if len(s) > limit {
				lit, err := marshalText(cutString(s, limit))
				if err != nil {
					return nil, err
				}
				out = append(append(out, raw[copied:i]...), lit...)
				copied = end + 1
			}
		}
		i = end
	}
	if out == nil {
		return raw, nil
	}
	return append(out, raw[copied:]...), nil
}
