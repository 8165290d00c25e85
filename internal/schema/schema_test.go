package schema

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// readArgs mirrors the read tool's arguments: offset and limit
// are JSON numbers, not integers, so 1.5 reaches the tool.
type readArgs struct {
	FilePath string   `json:"file_path" jsonschema:"description=Path to read\\, resolved by the filesystem backend."`
	Offset   *float64 `json:"offset,omitempty" jsonschema:"description=1-based first line to return. Defaults to 1."`
	Limit    *float64 `json:"limit,omitempty" jsonschema:"description=Maximum number of lines to return. Defaults to 2000."`
}

// config is a plugin-config-like struct: closed, with bounds and defaults.
type config struct {
	ReadLimit int      `json:"readLimit,omitempty" jsonschema:"minimum=1,default=2000"`
	Mode      string   `json:"mode,omitempty" jsonschema:"enum=fast,enum=safe,default=safe"`
	Name      string   `json:"name,omitempty" jsonschema:"minLength=1,maxLength=8,pattern=^[a-z]+$"`
	Ratio     float64  `json:"ratio,omitempty" jsonschema:"minimum=0,maximum=1"`
	Step      float64  `json:"step,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=10,multipleOf=0.5"`
	Tags      []string `json:"tags,omitempty" jsonschema:"minItems=1,maxItems=2,uniqueItems=true"`
	Strict    bool     `json:"strict,omitempty" jsonschema:"default=true"`
	Nested    nested   `json:"nested,omitempty"`
	Note      string   `json:"note,omitempty" jsonschema:"description=Shown <as is> & unescaped"`
	Contact   string   `json:"contact,omitempty" jsonschema:"format=email"`
	Required  string   `json:"required"`
	//lint:ignore U1000 present so that the schema is seen to leave it out
	unexported int
}

type nested struct {
	Depth int `json:"depth" jsonschema:"minimum=3"`
	Width int `json:"width,omitempty" jsonschema:"default=4"`
}

func mustFor(t *testing.T, typ reflect.Type, open bool) *Schema {
	t.Helper()
	s, err := For(typ, Options{Open: open})
	if err != nil {
		t.Fatalf("For(%v): %v", typ, err)
	}
	return s
}

// the document a model sees, byte for byte: flat, ordered, no $schema,
// $id, $defs or $ref, and open (no additionalProperties) for arguments.
func TestForToolArgumentsR002(t *testing.T) {
	s := mustFor(t, reflect.TypeFor[readArgs](), true)
	want := `{"properties":{"file_path":{"type":"string","description":"Path to read, resolved by the filesystem backend."},` +
		`"offset":{"type":"number","description":"1-based first line to return. Defaults to 1."},` +
		`"limit":{"type":"number","description":"Maximum number of lines to return. Defaults to 2000."}},` +
		`"type":"object","required":["file_path"]}`
	if got := string(s.JSON()); got != want {
		t.Fatalf("schema:\n got %s\nwant %s", got, want)
	}
	// A pointer to the struct derives the same document.
	if got := string(mustFor(t, reflect.TypeFor[*readArgs](), true).JSON()); got != want {
		t.Fatalf("pointer type: got %s", got)
	}
}

// Closed (config) schemas say additionalProperties false at every level, keep
// field order, inline nested structs and write <, >, & unescaped.
func TestForClosedConfig(t *testing.T) {
	s := mustFor(t, reflect.TypeFor[config](), false)
	want := `{"properties":{` +
		`"readLimit":{"type":"integer","minimum":1,"default":2000},` +
		`"mode":{"type":"string","enum":["fast","safe"],"default":"safe"},` +
		`"name":{"type":"string","maxLength":8,"minLength":1,"pattern":"^[a-z]+$"},` +
		`"ratio":{"type":"number","maximum":1,"minimum":0},` +
		`"step":{"type":"number","multipleOf":0.5,"exclusiveMaximum":10,"exclusiveMinimum":0},` +
		`"tags":{"items":{"type":"string"},"type":"array","maxItems":2,"minItems":1,"uniqueItems":true},` +
		`"strict":{"type":"boolean","default":true},` +
		`"nested":{"properties":{"depth":{"type":"integer","minimum":3},"width":{"type":"integer","default":4}},` +
		`"additionalProperties":false,"type":"object","required":["depth"]},` +
		`"note":{"type":"string","description":"Shown <as is> & unescaped"},` +
		`"contact":{"type":"string","format":"email"},` +
		`"required":{"type":"string"}},` +
		`"additionalProperties":false,"type":"object","required":["required"]}`
	if got := string(s.JSON()); got != want {
		t.Fatalf("schema:\n got %s\nwant %s", got, want)
	}
}

func TestForRejectsNonStructs(t *testing.T) {
	for _, typ := range []reflect.Type{nil, reflect.TypeFor[int](), reflect.TypeFor[[]readArgs](), reflect.TypeFor[map[string]any]()} {
		if _, err := For(typ, Options{}); err == nil {
			t.Errorf("For(%v): no error", typ)
		}
	}
	type withChan struct {
		C chan int `json:"c"`
	}
	if _, err := For(reflect.TypeFor[withChan](), Options{}); err == nil {
		t.Errorf("For(struct with chan): no error")
	}
}

func violations(t *testing.T, s *Schema, raw string) []string {
	t.Helper()
	err := s.Validate([]byte(raw))
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate(%s): %T %v, want *ValidationError", raw, err, err)
	}
	if ve.Error() != strings.Join(ve.Violations, "; ") {
		t.Fatalf("Error() = %q", ve.Error())
	}
	return ve.Violations
}

// the upstream wording for tool arguments, and null as a type violation.
func TestValidateToolArgsR021(t *testing.T) {
	type editArgs struct {
		FilePath   string `json:"file_path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll *bool  `json:"replace_all,omitempty"`
	}
	read := mustFor(t, reflect.TypeFor[readArgs](), true)
	edit := mustFor(t, reflect.TypeFor[editArgs](), true)
	tests := []struct {
		name string
		s    *Schema
		raw  string
		want []string
	}{
		{"valid", read, `{"file_path":"a.txt","offset":1.5,"limit":2.0}`, nil},
		{"open root ignores unknown keys R-004", read, `{"file_path":"a","replaceAll":false,"sandbox_permissions":"x"}`, nil},
		{"missing required", read, `{}`, []string{`missing required property "file_path"`}},
		{"number", read, `{"file_path":"a","offset":"1"}`, []string{`"offset" must be a number`}},
		{"null is a type violation", read, `{"file_path":"a","offset":null}`, []string{`"offset" must be a number`}},
		{"string", read, `{"file_path":7}`, []string{`"file_path" must be a string`}},
		{"boolean", edit, `{"file_path":"a","old_string":"x","new_string":"y","replace_all":"yes"}`, []string{`"replace_all" must be a boolean`}},
		{"several in declaration order", edit, `{"replace_all":1,"old_string":2}`, []string{
			`missing required property "file_path"`,
			`"old_string" must be a string`,
			`missing required property "new_string"`,
			`"replace_all" must be a boolean`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := violations(t, tt.s, tt.raw); !slices.Equal(got, tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidateMessages(t *testing.T) {
	s := mustFor(t, reflect.TypeFor[config](), false)
	tests := []struct {
		raw  string
		want []string
	}{
		{`{"required":"x"}`, nil},
		// R-008's shape: both a fraction and a non-positive integer.
		{`{"required":"x","readLimit":2.5}`, []string{`"readLimit" must be a positive integer`}},
		{`{"required":"x","readLimit":0}`, []string{`"readLimit" must be a positive integer`}},
		{`{"required":"x","readLimit":-1}`, []string{`"readLimit" must be a positive integer`}},
		{`{"required":"x","readLimit":-1.5}`, []string{`"readLimit" must be a positive integer`}},
		{`{"required":"x","readLimit":"10"}`, []string{`"readLimit" must be a positive integer`}},
		{`{"required":"x","readLimit":2.0}`, nil},
		{`{"required":"x","mode":"slow"}`, []string{`"mode" must be one of "fast", "safe"`}},
		// Two failures at one place: by rank, then alphabetically.
		{`{"required":"x","name":""}`, []string{`"name" must match the pattern "^[a-z]+$"`, `"name" must not be empty`}},
		{`{"required":"x","name":"abcdefghi"}`, []string{`"name" must be at most 8 characters long`}},
		{`{"required":"x","name":"A"}`, []string{`"name" must match the pattern "^[a-z]+$"`}},
		{`{"required":"x","contact":"nobody"}`, []string{`"contact" must be a valid email`}},
		{`{"required":"x","contact":"a@example.com"}`, nil},
		{`{"required":"x","ratio":-0.5}`, []string{`"ratio" must be >= 0`}},
		{`{"required":"x","ratio":1.25}`, []string{`"ratio" must be <= 1`}},
		{`{"required":"x","step":0}`, []string{`"step" must be > 0`}},
		{`{"required":"x","step":10}`, []string{`"step" must be < 10`}},
		{`{"required":"x","step":0.3}`, []string{`"step" must be a multiple of 0.5`}},
		{`{"required":"x","tags":[]}`, []string{`"tags" must have at least 1 item`}},
		{`{"required":"x","tags":["a","b","c"]}`, []string{`"tags" must have at most 2 items`}},
		{`{"required":"x","tags":["a","a"]}`, []string{`"tags" must not contain duplicate items`}},
		{`{"required":"x","tags":["a",1]}`, []string{`"tags[1]" must be a string`}},
		{`{"required":"x","strict":null}`, []string{`"strict" must be a boolean`}},
		{`{"required":"x","nested":{"depth":1}}`, []string{`"nested.depth" must be >= 3`}},
		{`{"required":"x","nested":{}}`, []string{`missing required property "nested.depth"`}},
		{`{"required":"x","nested":{"depth":3,"extra":1}}`, []string{`unknown property "nested.extra"`}},
		{`{"required":"x","nested":[]}`, []string{`"nested" must be an object`}},
		{`{"zeta":1,"alpha":2,"required":"x"}`, []string{`unknown property "alpha"`, `unknown property "zeta"`}},
		{`{"we\"ird":1,"required":"x"}`, []string{`unknown property "we\"ird"`}},
		{`[]`, []string{`expected an object, got an array`}},
		{`"text"`, []string{`expected an object, got a string`}},
		{`null`, []string{`expected an object, got null`}},
		// Order: declared properties in declaration order (a missing one at
		// its own place), undeclared after them by name.
		{`{"zz":0,"tags":[],"readLimit":0,"name":"Abcdefghi","nested":{"extra":1,"depth":0}}`, []string{
			`"readLimit" must be a positive integer`,
			`"name" must be at most 8 characters long`,
			`"name" must match the pattern "^[a-z]+$"`,
			`"tags" must have at least 1 item`,
			`"nested.depth" must be >= 3`,
			`unknown property "nested.extra"`,
			`missing required property "required"`,
			`unknown property "zz"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			if got := violations(t, s, tt.raw); !slices.Equal(got, tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidateNotJSON(t *testing.T) {
	s := mustFor(t, reflect.TypeFor[readArgs](), true)
	for raw, want := range map[string]string{
		``:              `invalid JSON: empty input`,
		"  \n":          `invalid JSON: empty input`,
		`{"file_path":`: `invalid JSON: unexpected EOF`,
		`{} {}`:         `invalid JSON: invalid character after top-level value`,
		`nope`:          `invalid JSON: invalid character 'o' in literal null (expecting 'u')`,
	} {
		err := s.Validate([]byte(raw))
		var ve *ValidationError
		if err == nil || errors.As(err, &ve) || err.Error() != want {
			t.Errorf("Validate(%q) = %v, want plain error %q", raw, err, want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	s := mustFor(t, reflect.TypeFor[config](), false)
	tests := []struct{ raw, want string }{
		{`{}`, `{"mode":"safe","readLimit":2000,"strict":true}`},
		{`{"nested":{}}`, `{"mode":"safe","nested":{"width":4},"readLimit":2000,"strict":true}`},
		{`{"readLimit":5,"strict":false,"mode":"fast","nested":{"depth":3}}`, `{"mode":"fast","nested":{"depth":3,"width":4},"readLimit":5,"strict":false}`},
		// Explicit null is a value, not absence: it stays for Validate to report.
		{`{"readLimit":null,"mode":"safe","nested":{"width":1},"note":"<&>"}`, `{"mode":"safe","nested":{"width":1},"note":"<&>","readLimit":null,"strict":true}`},
		// Nothing to fill: the input comes back as it was.
		{` {"mode":"fast","readLimit":1,"strict":true,"nested":{"width":2}} `, ` {"mode":"fast","readLimit":1,"strict":true,"nested":{"width":2}} `},
		{`[1]`, `[1]`},
	}
	for _, tt := range tests {
		got, err := s.WithDefaults([]byte(tt.raw))
		if err != nil || string(got) != tt.want {
			t.Errorf("WithDefaults(%s) = %s, %v\nwant %s", tt.raw, got, err, tt.want)
		}
	}
	// Defaults never leak from one call into the next.
	a, _ := s.WithDefaults([]byte(`{}`))
	b, _ := s.WithDefaults([]byte(`{}`))
	if string(a) != string(b) {
		t.Fatalf("not repeatable: %s vs %s", a, b)
	}
	if _, err := s.WithDefaults([]byte(`{`)); err == nil {
		t.Fatal("WithDefaults accepted broken JSON")
	}
	// An absent nested object is not invented (for a pointer it may mean
	// "off"), but one with its own default is filled.
	type outer struct {
		Inner    *nested  `json:"inner,omitempty"`
		Defaults []string `json:"defaults,omitempty" jsonschema:"default=a,default=b"`
	}
	o := mustFor(t, reflect.TypeFor[outer](), false)
	if got, _ := o.WithDefaults([]byte(`{}`)); string(got) != `{"defaults":["a","b"]}` {
		t.Fatalf("got %s", got)
	}
}

func TestUnescapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		`"\u003ca\u003e \u0026"`: `"<a> &"`,
		`"\\u003c"`:              `"\\u003c"`,
		`"\\\u003c"`:             `"\\<"`,
		`"\u00e9\n"`:             `"\u00e9\n"`,
		`"\u003`:                 `"\u003`,
	} {
		if got := string(unescapeHTML([]byte(in))); got != want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", in, got, want)
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"file_path":"a","offset":1.5}`, `{"file_path":null,"offset":"x","limit":-1}`,
		`[]`, `null`, `"s"`, `{"a":{"b":[1,{"c":null}]}}`, `{`, ``, `1e999`, `{"offset":1e999}`,
		`{"tags":[1,2,"a","a"],"nested":{"depth":"x"},"readLimit":0.5}`,
	} {
		f.Add([]byte(seed))
	}
	schemas := []*Schema{
		mustFor(&testing.T{}, reflect.TypeFor[readArgs](), true),
		mustFor(&testing.T{}, reflect.TypeFor[config](), false),
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, s := range schemas {
			first := s.Validate(raw)
			second := s.Validate(raw)
			if (first == nil) != (second == nil) || (first != nil && first.Error() != second.Error()) {
				t.Fatalf("not deterministic: %v vs %v", first, second)
			}
			var ve *ValidationError
			if errors.As(first, &ve) && len(ve.Violations) == 0 {
				t.Fatal("validation error without violations")
			}
			if _, err := s.WithDefaults(raw); (err == nil) != (first == nil || ve != nil) {
				t.Fatalf("WithDefaults and Validate disagree on JSON-ness: %v vs %v", err, first)
			}
		}
	})
}

func BenchmarkValidateArgs(b *testing.B) {
	s, err := For(reflect.TypeFor[readArgs](), Options{Open: true})
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"file_path":"/workspace/src/main.go","offset":120,"limit":200}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateInvalidArgs(b *testing.B) {
	s, err := For(reflect.TypeFor[readArgs](), Options{Open: true})
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"offset":null,"limit":"x"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(raw); err == nil {
			b.Fatal("valid")
		}
	}
}

// Compile keeps a hand-written document verbatim and its property order.
func TestCompile(t *testing.T) {
	doc := `{"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "integer", "minimum": 1}}, "required": ["alpha"]}`
	s, err := Compile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if string(s.JSON()) != doc {
		t.Fatalf("JSON() = %s", s.JSON())
	}
	got := violations(t, s, `{"zeta":1}`)
	want := []string{`"zeta" must be a string`, `missing required property "alpha"`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := violations(t, s, `{"alpha":0.5}`); !slices.Equal(got, []string{`"alpha" must be a positive integer`}) {
		t.Fatalf("got %q", got)
	}
	for _, bad := range []string{``, `nope`, `{"type":5}`, `{"properties":[]}`} {
		if _, err := Compile([]byte(bad)); err == nil {
			t.Errorf("Compile(%s): no error", bad)
		}
	}
}

// The keywords struct tags rarely produce, through a hand-written document.
func TestValidateOtherKeywords(t *testing.T) {
	doc := `{"type":"object","properties":{
		"c":{"const":"on"},
		"any":{"anyOf":[{"type":"string"},{"type":"integer"}]},
		"one":{"oneOf":[{"type":"integer"},{"minimum":0}]},
		"not":{"not":{"type":"string"}},
		"never":false,
		"obj":{"type":"object","minProperties":2,"maxProperties":3},
		"multi":{"type":["string","null"]},
		"len":{"type":"string","minLength":3},
		"e1":{"enum":[1]},
		"pair":{"type":"array","prefixItems":[{"type":"string"}],"items":false}
	}}`
	s, err := Compile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		raw  string
		want []string
	}{
		{`{"c":"off"}`, []string{`"c" must be "on"`}},
		{`{"any":1.5}`, []string{`"any" does not match any allowed form`}},
		{`{"one":-1.5}`, []string{`"one" does not match any allowed form`}},
		{`{"one":3}`, []string{`"one" matches more than one allowed form`}},
		{`{"not":"s"}`, []string{`"not" is invalid: 'not' failed`}},
		{`{"never":1}`, []string{`"never" is not allowed`}},
		{`{"obj":{"a":1}}`, []string{`"obj" must have at least 2 properties`}},
		{`{"obj":{"a":1,"b":2,"c":3,"d":4}}`, []string{`"obj" must have at most 3 properties`}},
		{`{"multi":1}`, []string{`"multi" must be null or a string`}},
		{`{"len":"ab"}`, []string{`"len" must be at least 3 characters long`}},
		{`{"e1":2}`, []string{`"e1" must be 1`}},
		{`{"pair":["a",2]}`, []string{`"pair[1]" is not allowed`}},
	}
	for _, tt := range tests {
		if got := violations(t, s, tt.raw); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.raw, got, tt.want)
		}
	}
}
