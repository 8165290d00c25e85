package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The shapes the one-pass decoder covers: strings, numbers, integers and
// booleans, plain and as pointers.
type (
	writeArgs struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	editArgs struct {
		FilePath   string `json:"file_path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all,omitempty"`
	}
	countArgs struct {
		N     int     `json:"n"`
		Small *int8   `json:"small,omitempty"`
		U     *uint16 `json:"u,omitempty"`
		F32   float32 `json:"f32,omitempty"`
		Flag  *bool   `json:"flag,omitempty"`
		Name  *string `json:"name,omitempty"`
	}
)

func mustDecoder(t testing.TB, typ reflect.Type) *Decoder {
	t.Helper()
	s, err := For(typ, Options{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Decoder(typ)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecoderIsOnePassForFlatArguments(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[readArgs](), reflect.TypeFor[writeArgs](), reflect.TypeFor[editArgs](), reflect.TypeFor[countArgs]()} {
		if d := mustDecoder(t, typ); d.fields == nil {
			t.Errorf("%v: not decoded in one pass", typ)
		}
	}
	type nestedArgs struct {
		Tags []string `json:"tags"`
	}
	type bounded struct {
		N int `json:"n" jsonschema:"minimum=1"`
	}
	type quoted struct {
		N int `json:"n,string"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[nestedArgs](), reflect.TypeFor[bounded](), reflect.TypeFor[quoted](), reflect.TypeFor[json.RawMessage]()} {
		s, err := For(typ, Options{Open: true})
		if err != nil {
			continue // not a struct: For refuses it already
		}
		if d, _ := s.Decoder(typ); d.fields != nil {
			t.Errorf("%v: decoded in one pass", typ)
		}
	}
	// A closed schema reports unknown keys: the validator does that.
	s, _ := For(reflect.TypeFor[writeArgs](), Options{})
	if d, _ := s.Decoder(reflect.TypeFor[writeArgs]()); d.fields != nil {
		t.Error("closed schema decoded in one pass")
	}
}

func TestDecode(t *testing.T) {
	write := mustDecoder(t, reflect.TypeFor[writeArgs]())
	tests := []struct {
		raw  string
		want writeArgs
		err  string
	}{
		{`{"file_path":"a","content":"x"}`, writeArgs{"a", "x"}, ""},
		{` {"content" : "l1\nl2\t\"q\"\\ \/ \u00e9\ud83d\ude00 \ud800 \u0041" , "file_path":"é"} `, writeArgs{"é", "l1\nl2\t\"q\"\\ / é😀 \uFFFD A"}, ""},
		{"{\"file_path\":\"a\xffb\",\"content\":\"\"}", writeArgs{"a\uFFFDb", ""}, ""},
		// Invalid UTF-8 decodes longer than it is written, after an escape made room.
		{"{\"file_path\":\"\\b0\xda0\",\"content\":\"\xff\xfe\\n\"}", writeArgs{"\b0\uFFFD0", "\uFFFD\uFFFD\n"}, ""},
		// A multi-byte character after invalid UTF-8 that filled the storage.
		{"{\"file_path\":\"\xff\u00e9\",\"content\":\"\xff\xf0\x9f\x98\x80\"}", writeArgs{"\uFFFD\u00e9", "\uFFFD\U0001F600"}, ""},
		// Keys match exactly: a case variant is an undeclared key.
		{`{"file_path":"ok","FILE_PATH":"../x","content":""}`, writeArgs{"ok", ""}, ""},
		{`{"File_Path":"../x","content":""}`, writeArgs{}, `missing required property "file_path"`},
		// An escaped key is the key it spells.
		{`{"file\u005fpath":"a","content":"c"}`, writeArgs{"a", "c"}, ""},
		{`{"file_path":"a","file_path":"b","content":"c"}`, writeArgs{}, `duplicate property "file_path"`},
		{`{"file_path":1,"file_path":"b","content":"c","content":"d"}`, writeArgs{}, `"file_path" must be a string; duplicate property "file_path"; duplicate property "content"`},
		{`{"content":null,"x":{"y":[1,{"z":"w"}]}}`, writeArgs{}, `missing required property "file_path"; "content" must be a string`},
		{"{\"file_path\":\"a\",\"content\":\"\x01\"}", writeArgs{}, "invalid JSON: invalid character '\\x01' in string literal"},
		{`{"file_path":"a","content":"x"} x`, writeArgs{}, `invalid JSON: invalid character after top-level value`},
		{`{"file_path":"a",}`, writeArgs{}, `invalid JSON: invalid character '}' looking for beginning of object key string`},
		{`[]`, writeArgs{}, `expected an object, got an array`},
		{``, writeArgs{}, `invalid JSON: empty input`},
	}
	for _, tt := range tests {
		var got writeArgs
		err := write.Decode([]byte(tt.raw), &got)
		if msg := errText(err); msg != tt.err {
			t.Errorf("Decode(%s): error %q, want %q", tt.raw, msg, tt.err)
			continue
		}
		if err == nil && got != tt.want {
			t.Errorf("Decode(%s) = %+v, want %+v", tt.raw, got, tt.want)
		}
	}

	count := mustDecoder(t, reflect.TypeFor[countArgs]())
	for raw, want := range map[string]string{
		`{"n":3,"small":-128,"u":65535,"f32":1.5,"flag":false,"name":""}`: "",
		`{"n":1e2}`:             "json: cannot unmarshal number 1e2 into Go struct field countArgs.n of type int",
		`{"n":2.0}`:             "json: cannot unmarshal number 2.0 into Go struct field countArgs.n of type int",
		`{"n":1,"small":128}`:   "json: cannot unmarshal number 128 into Go struct field countArgs.small of type int8",
		`{"n":1,"u":-1}`:        "json: cannot unmarshal number -1 into Go struct field countArgs.u of type uint16",
		`{"n":1,"f32":1e39}`:    "json: cannot unmarshal number 1e39 into Go struct field countArgs.f32 of type float32",
		`{"n":1.5,"flag":"no"}`: `"n" must be an integer; "flag" must be a boolean`,
		`{"n":true,"name":7}`:   `"n" must be an integer; "name" must be a string`,
	} {
		var got countArgs
		if msg := errText(count.Decode([]byte(raw), &got)); msg != want {
			t.Errorf("Decode(%s): error %q, want %q", raw, msg, want)
		}
	}
	var c countArgs
	if err := count.Decode([]byte(`{"n":3,"small":-128,"u":65535,"f32":1.5,"flag":false,"name":"x"}`), &c); err != nil ||
		c.N != 3 || *c.Small != -128 || *c.U != 65535 || c.F32 != 1.5 || *c.Flag || *c.Name != "x" {
		t.Fatalf("decoded %+v, %v", c, err)
	}
	if err := count.Decode([]byte(`{}`), &writeArgs{}); err == nil {
		t.Fatal("decoded into the wrong type")
	}
}

// Arguments that are not flat keep the same key rules: a case variant of a
// declared key is undeclared, so it can neither bypass the schema's bounds
// nor replace the value a permission rule read, and a declared key given
// twice is a violation.
func TestDecodeValidatedExactKeys(t *testing.T) {
	type boundedArgs struct {
		FilePath string   `json:"file_path"`
		N        int      `json:"n" jsonschema:"minimum=1"`
		Tags     []string `json:"tags,omitempty"`
	}
	d := mustDecoder(t, reflect.TypeFor[boundedArgs]())
	if d.fields != nil {
		t.Fatal("bounded arguments decoded in one pass")
	}
	for _, tt := range []struct {
		raw  string
		want boundedArgs
		err  string
	}{
		{`{"file_path":"ok","n":5,"tags":["a"]}`, boundedArgs{"ok", 5, []string{"a"}}, ""},
		{`{"file_path":"ok","n":5,"N":-1,"FILE_PATH":"../x","x":{"y":1}}`, boundedArgs{"ok", 5, nil}, ""},
		{` { "N" : -1 , "n" : 2 , "file_path" : "a" } `, boundedArgs{"a", 2, nil}, ""},
		{`{"File_Path":"../x","n":1}`, boundedArgs{}, `missing required property "file_path"`},
		{`{"file_path":"a","n":1,"n":2}`, boundedArgs{}, `duplicate property "n"`},
		{`{"file_path":"a","n":0,"file_path":"b"}`, boundedArgs{}, `"n" must be a positive integer; duplicate property "file_path"`},
		{`{"file_path":"a","n":1,}`, boundedArgs{}, `invalid JSON: invalid character '}' looking for beginning of object key string`},
		{`[]`, boundedArgs{}, `expected an object, got an array`},
	} {
		var got boundedArgs
		err := d.Decode([]byte(tt.raw), &got)
		if msg := errText(err); msg != tt.err {
			t.Errorf("Decode(%s): error %q, want %q", tt.raw, msg, tt.err)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Decode(%s) = %+v, want %+v", tt.raw, got, tt.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A string is copied once, into storage of exactly its length.
func TestDecodeAllocations(t *testing.T) {
	write := mustDecoder(t, reflect.TypeFor[writeArgs]())
	content := strings.Repeat("line \"quoted\"\n", 1<<16)
	raw, _ := json.Marshal(writeArgs{FilePath: "a.txt", Content: content})
	var got writeArgs
	allocs := testing.AllocsPerRun(10, func() {
		got = writeArgs{}
		if err := write.Decode(raw, &got); err != nil {
			t.Fatal(err)
		}
	})
	if got.Content != content {
		t.Fatal("content differs")
	}
	// One allocation per string, and the reflect.Value of dst.
	if allocs > 3 {
		t.Fatalf("%v allocations per Decode, want at most 3", allocs)
	}
	// And one copy's worth of bytes, no larger than the JSON form (plus the
	// allocator's rounding): no second copy, no growing buffer.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := write.Decode(raw, &got); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(raw))+16<<10 {
		t.Fatalf("Decode allocated %d bytes for %d bytes of arguments", n, len(raw))
	}
}

// FuzzDecode is differential: the one-pass decoder accepts and rejects what
// the validator followed by encoding/json does, with the same words and
// the same values, except where it is stricter by design (duplicate
// declared keys) or exact (keys that differ only in case).
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"file_path":"a","offset":1.5}`, `{"file_path":null,"offset":"x","limit":-1}`,
		`{"file_path":"a","content":"b\n\u00e9\ud83d\ude00","old_string":"x","new_string":"y","replace_all":true}`,
		`{"n":1e2,"small":-129,"u":70000,"f32":1e39,"flag":null,"name":"\ud800"}`,
		`{"a":[{"b":{}}],"file_path":"a\\b"}`, `[]`, `null`, `"s"`, `{`, ``, `1e999`, `{"offset":1e999}`,
		"{\"file_path\":\"\xff\"}", `{"FILE_PATH":"x","file_path":"y"}`, `{"n":1,"n":2}`,
	} {
		f.Add([]byte(seed))
	}
	type listArgs struct { // not flat: decoded by encoding/json
		FilePath string   `json:"file_path"`
		Offset   int      `json:"offset,omitempty" jsonschema:"minimum=1"`
		Tags     []string `json:"tags,omitempty"`
	}
	decoders := append(flatDecoders(f), mustDecoder(f, reflect.TypeFor[listArgs]()))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, d := range decoders {
			got := reflect.New(d.typ)
			err := d.Decode(raw, got.Interface())

			want := reflect.New(d.typ)
			wantErr := d.schema.Validate(raw)
			if wantErr == nil {
				wantErr = json.Unmarshal(raw, want.Interface())
			}
			keys := topLevelKeys(raw)
			if repeatsDeclared(d, keys) {
				var ve *ValidationError
				if !errors.As(err, &ve) || !slices.ContainsFunc(ve.Violations, func(v string) bool { return strings.HasPrefix(v, "duplicate property ") }) {
					t.Fatalf("%v: %q: a repeated property is not a violation: %v", d.typ, raw, err)
				}
				continue
			}
			if foldsDeclared(d, keys) {
				// encoding/json would decode the case variant; the decoder
				// ignores it, but still accepts nothing the validator rejects.
				if err == nil && d.schema.Validate(raw) != nil {
					t.Fatalf("%v: %q: accepted what the validator rejects", d.typ, raw)
				}
				continue
			}
			if errText(err) != errText(wantErr) {
				t.Fatalf("%v: %q:\n got %v\nwant %v", d.typ, raw, err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got.Interface(), want.Interface()) {
				t.Fatalf("%v: %q: decoded %+v, want %+v", d.typ, raw, got.Elem(), want.Elem())
			}
		}
	})
}

// topLevelKeys lists the keys of a JSON object, repeats included, or
// returns nil. A truncated object is not one: its keys must not make a
// syntax error look like a missing duplicate violation.
func topLevelKeys(raw []byte) []string {
	if !json.Valid(raw) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return keys
}

// declaredNames are the decoder's top-level property names.
func declaredNames(d *Decoder) []string {
	if d.fields == nil {
		return d.declared
	}
	names := make([]string, len(d.fields))
	for i, f := range d.fields {
		names[i] = f.name
	}
	return names
}

func repeatsDeclared(d *Decoder, keys []string) bool {
	for _, name := range declaredNames(d) {
		n := 0
		for _, k := range keys {
			if k == name {
				n++
			}
		}
		if n > 1 {
			return true
		}
	}
	return false
}

func foldsDeclared(d *Decoder, keys []string) bool {
	for _, name := range declaredNames(d) {
		for _, k := range keys {
			if k != name && strings.EqualFold(k, name) {
				return true
			}
		}
	}
	return false
}

func BenchmarkDecodeArgs(b *testing.B) {
	benchDecode[readArgs](b, []byte(`{"file_path":"/workspace/src/main.go","offset":120,"limit":200}`))
}

// BenchmarkDecodeWrite8MiB: a write's arguments with 8 MiB of content, a
// few escapes in every line, as a model sends source code.
func BenchmarkDecodeWrite8MiB(b *testing.B) {
	line := strings.Repeat("x", 60) + "\t\"quoted\"\n"
	raw, _ := json.Marshal(writeArgs{FilePath: "a.txt", Content: strings.Repeat(line, (8<<20)/len(line))})
	b.SetBytes(int64(len(raw)))
	benchDecode[writeArgs](b, raw)
}

func benchDecode[A any](b *testing.B, raw []byte) {
	d := mustDecoder(b, reflect.TypeFor[A]())
	b.ReportAllocs()
	for b.Loop() {
		var a A
		if err := d.Decode(raw, &a); err != nil {
			b.Fatal(err)
		}
	}
}

// plainRun stops at the first byte a string body cannot hold as is, at
// every offset of a word and for every byte value, and copies what it
// passes over.
func TestPlainRun(t *testing.T) {
	for pos := range 20 {
		for c := range 256 {
			b := []byte(strings.Repeat("a", 20))
			b[pos] = byte(c)
			if pos+1 < len(b) {
				b[pos+1] = 0 // a later special byte must not mask this one
			}
			want := pos
			if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
				want = pos + 1
			}
			if i, n := plainRun(b, 0, nil, 0); i != want || n != want {
				t.Fatalf("byte %#x at %d: measured (%d, %d), want %d", c, pos, i, n, want)
			}
			dst := make([]byte, len(b))
			if i, n := plainRun(b, 0, dst, 0); i != want || n != want || string(dst[:n]) != string(b[:want]) {
				t.Fatalf("byte %#x at %d: copied (%d, %d) %q, want %d", c, pos, i, n, dst[:n], want)
			}
		}
	}
}
