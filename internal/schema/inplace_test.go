package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// everywhere decodes every string in place, whatever its size.
func everywhere(string, int) bool { return true }

func TestDecodeInPlace(t *testing.T) {
	d := mustDecoder(t, reflect.TypeFor[writeArgs]())
	tests := []struct {
		name, raw string
		inPlace   func(string, int) bool
		want      writeArgs
		spans     []Span
		err       string
		rawAfter  string // when raw changes
	}{{
		name:    "escapes rewritten where they stand",
		raw:     `{"file_path":"a","content":"x\ny\u00e9\"z"}`,
		inPlace: everywhere,
		want:    writeArgs{FilePath: "a", Content: "x\nyé\"z"},
		spans:   []Span{{Start: 27, End: 42, Value: "x\nyé\"z"}},
		// The decoding, then the bytes it no longer needs.
		rawAfter: "{\"file_path\":\"a\",\"content\":\"x\nyé\"z0e9\\\"z\"}",
	}, {
		name:    "a string without escapes is shared as it is",
		raw:     `{"file_path":"a","content":"plain text"}`,
		inPlace: everywhere,
		want:    writeArgs{FilePath: "a", Content: "plain text"},
	}, {
		name:     "the caller picks by name and size",
		raw:      `{"file_path":"a\tb","content":"x\ny"}`,
		inPlace:  func(name string, size int) bool { return name == "content" && size >= 4 },
		want:     writeArgs{FilePath: "a\tb", Content: "x\ny"},
		spans:    []Span{{Start: 30, End: 36, Value: "x\ny"}},
		rawAfter: "{\"file_path\":\"a\\tb\",\"content\":\"x\nyy\"}",
	}, {
		name:     "invalid UTF-8 that would overtake the reading is finished in a copy",
		raw:      "{\"file_path\":\"a\",\"content\":\"\xff\xff\\n\"}",
		inPlace:  everywhere,
		want:     writeArgs{FilePath: "a", Content: "\uFFFD\uFFFD\n"},
		spans:    []Span{{Start: 27, End: 33, Value: "\uFFFD\uFFFD\n"}},
		rawAfter: "{\"file_path\":\"a\",\"content\":\"\xff\xff\\n\"}",
	}, {
		name:    "a syntax error after the string leaves raw as it was",
		raw:     `{"file_path":"a","content":"x\ny",}`,
		inPlace: everywhere,
		err:     "invalid JSON: invalid character '}' looking for beginning of object key string",
	}, {
		name:    "so does a violation",
		raw:     `{"content":"x\ny"}`,
		inPlace: everywhere,
		err:     `missing required property "file_path"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := []byte(tt.raw)
			var got writeArgs
			spans, err := d.DecodeInPlace(raw, &got, tt.inPlace)
			if errText(err) != tt.err {
				t.Fatalf("error %v, want %s", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("decoded %+v, want %+v", got, tt.want)
			}
			if !reflect.DeepEqual(spans, tt.spans) {
				t.Errorf("spans %+v, want %+v", spans, tt.spans)
			}
			after := tt.rawAfter
			if after == "" {
				after = tt.raw
			}
			if string(raw) != after {
				t.Errorf("raw is now %q, want %q", raw, after)
			}
		})
	}
}

// A string decoded in place shares raw's storage: its bytes are never
// copied, whatever its size.
func TestDecodeInPlaceShares(t *testing.T) {
	d := mustDecoder(t, reflect.TypeFor[writeArgs]())
	content := strings.Repeat("0123456789abcde\n", 1<<12)
	pristine, _ := json.Marshal(writeArgs{FilePath: "a", Content: content})
	raw := bytes.Clone(pristine)
	var got writeArgs
	decode := func() {
		copy(raw, pristine)
		spans, err := d.DecodeInPlace(raw, &got, func(_ string, size int) bool { return size > 1024 })
		if err != nil || len(spans) != 1 {
			t.Fatal(spans, err)
		}
	}
	// "a", the pending string, the span and the reflect.Value of dst.
	if allocs := testing.AllocsPerRun(10, decode); allocs > 4 {
		t.Errorf("%v allocations, want at most 4", allocs)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	decode()
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<10 {
		t.Errorf("DecodeInPlace allocated %d bytes for %d bytes of arguments", n, len(raw))
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(got.Content)))
	if base := uintptr(unsafe.Pointer(&raw[0])); start < base || start >= base+uintptr(len(raw)) {
		t.Error("the content does not share raw's storage")
	}
	if got.Content != content {
		t.Errorf("content %q..., want %q...", got.Content[:32], content[:32])
	}
}

// flatDecoders are one-pass decoders of the argument shapes of the file
// tools and of every kind of flat field.
func flatDecoders(t testing.TB) []*Decoder {
	return []*Decoder{
		mustDecoder(t, reflect.TypeFor[readArgs]()),
		mustDecoder(t, reflect.TypeFor[writeArgs]()),
		mustDecoder(t, reflect.TypeFor[editArgs]()),
		mustDecoder(t, reflect.TypeFor[countArgs]()),
	}
}

// FuzzDecodeInPlace is differential: decoding every string in place
// accepts, rejects and decodes what Decode does, leaves raw as it was on
// error, and changes no byte outside the spans.
func FuzzDecodeInPlace(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"file_path":"a","content":"b\n\u00e9\ud83d\ude00"}`, `{"file_path":"a","content":"x",}`,
		"{\"file_path\":\"\xff\\n\",\"old_string\":\"\\n\\n\xff\xff\",\"new_string\":\"\\u00e9\",\"replace_all\":true}",
		`{"n":1,"name":"\ud800\n"}`, `{"file_path":"a","file_path":"b\n"}`, `{"file_path":1}`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	decoders := flatDecoders(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, d := range decoders {
			want := reflect.New(d.typ)
			wantErr := d.Decode(raw, want.Interface())

			got := reflect.New(d.typ)
			owned := bytes.Clone(raw)
			spans, err := d.DecodeInPlace(owned, got.Interface(), everywhere)
			if errText(err) != errText(wantErr) {
				t.Fatalf("%v: %q:\n got %v\nwant %v", d.typ, raw, err, wantErr)
			}
			if err != nil {
				if !bytes.Equal(owned, raw) || spans != nil {
					t.Fatalf("%v: %q: raw %q and spans %v after an error", d.typ, raw, owned, spans)
				}
				continue
			}
			if !reflect.DeepEqual(got.Interface(), want.Interface()) {
				t.Fatalf("%v: %q: decoded %+v, want %+v", d.typ, raw, got.Elem(), want.Elem())
			}
			prev := 0
			for _, sp := range spans {
				if !bytes.Equal(owned[prev:sp.Start], raw[prev:sp.Start]) {
					t.Fatalf("%v: %q: changed outside the spans: %q", d.typ, raw, owned)
				}
				prev = sp.End
			}
			if !bytes.Equal(owned[prev:], raw[prev:]) {
				t.Fatalf("%v: %q: changed outside the spans: %q", d.typ, raw, owned)
			}
		}
	})
}

// FuzzUnquoteInPlace holds the in-place unescaper to encoding/json: the
// same string for every literal the check before it accepts, an error from
// encoding/json for every one it rejects, and a change reported exactly
// when the decoding differs from the literal's body.
func FuzzUnquoteInPlace(f *testing.F) {
	for _, seed := range []string{
		``, `plain`, `\n\t\"\\\/\b\f\r`, `\u00e9\ud83d\ude00\ud800\udc00x`, `\ud800`, `\ud800\u0041`,
		"\xff", "\xff\xff\\n", "\\n\\n\xffz", "é\xe2\x82", `\x`, `\u12`, "a\nb", `a"b`, `\`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		lit := append(append([]byte{'"'}, body...), '"')
		var want string
		wantErr := json.Unmarshal(lit, &want)
		end, ascii := checkedQuote(lit, 1)
		ok := end == len(lit)-1 // a quote inside ends the literal early
		if ok != (wantErr == nil) {
			t.Fatalf("%q: checked ok=%v, encoding/json says %v", body, ok, wantErr)
		}
		if !ok {
			return
		}
		if ascii != !bytes.ContainsFunc(body, func(r rune) bool { return r >= utf8.RuneSelf }) {
			t.Fatalf("%q: ascii %v", body, ascii)
		}
		got, changed := unquoteInPlace(lit[1:end], ascii)
		if got != want {
			t.Fatalf("%q: decoded %q, want %q", body, got, want)
		}
		if wantChanged := !bytes.Equal(body, []byte(want)); changed != wantChanged {
			t.Fatalf("%q: changed %v, want %v", body, changed, wantChanged)
		}
	})
}

// BenchmarkUnquoteInPlace: 8 MiB of 64-byte lines, a newline escape each,
// decoded where they stand; then the same with one invalid UTF-8 byte.
func BenchmarkUnquoteInPlace(b *testing.B) {
	for _, tail := range []string{"", "\xff"} {
		raw, _ := json.Marshal(strings.Repeat(strings.Repeat("x", 63)+"\n", 8<<20/64))
		body := append(raw[1:len(raw)-1], tail...)
		buf := make([]byte, len(body))
		b.Run(fmt.Sprintf("tail=%q", tail), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, body)
				if s, changed := unquoteInPlace(buf, tail == ""); len(s) < 8<<20 || !changed {
					b.Fatal(len(s), changed)
				}
			}
		})
	}
}
