package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Object accepts exactly one JSON object, as encoding/json does.
func TestObject(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want bool
	}{
		{`{"a":[1,-2.5e3,true,false,null,"x"],"b":{}}`, true},
		{" \t\n{}\r\n ", true},
		{`{"s":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800"}`, true},
		{"{\"\xff\":\"\xfe\"}", true}, // invalid UTF-8 decodes as U+FFFD: valid JSON
		{`[]`, false},
		{`"s"`, false},
		{`{"a":1,}`, false},
		{`{"a":1`, false},
		{`{"a":1} {}`, false},
		{`{"a":"\x"}`, false},
		{`{"a":"\u00zz"}`, false},
		{"{\"a\":\"a\tb\"}", false}, // a raw control character
		{"{\"a\tb\":1}", false},
		{`{"a":"abc}`, false},
		{`{"a":01}`, false},
		{`{a:1}`, false},
		{``, false},
		{`{"a":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, false},
		{`{"a":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`, true},
	} {
		if _, got := Object([]byte(tt.raw)); got != tt.want {
			t.Errorf("Object(%.40q) ok = %v, want %v", tt.raw, got, tt.want)
		}
	}
}

func TestMembers(t *testing.T) {
	raw := []byte(` { "tool" : "read", "args":{"file_path":"a\n"} ,"a\u0062":[1, {"x":"}"}], "tool":null } `)
	want := []Member{{"tool", []byte(`"read"`)}, {"args", []byte(`{"file_path":"a\n"}`)}, {"ab", []byte(`[1, {"x":"}"}]`)}, {"tool", []byte(`null`)}}
	for name, split := range map[string]func([]byte) ([]Member, bool){"Object": Object, "Members": Members} {
		got, ok := split(raw)
		if !ok || len(got) != len(want) {
			t.Fatalf("%s = %q, %v; want %q", name, got, ok, want)
		}
		for i := range want {
			if got[i].Key != want[i].Key || !bytes.Equal(got[i].Value, want[i].Value) {
				t.Errorf("%s: member %d = %q: %s, want %q: %s", name, i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
			}
		}
		if &got[1].Value[0] != &raw[bytes.Index(raw, []byte(`{"file_path"`))] {
			t.Errorf("%s: a value is a copy, not the bytes of raw", name)
		}
	}
	for _, raw := range []string{`{}`, ` {} `} {
		if got, ok := Members([]byte(raw)); !ok || len(got) != 0 {
			t.Errorf("Members(%s) = %q, %v; want none, true", raw, got, ok)
		}
	}
	for _, raw := range []string{`[]`, `"x"`, ``} {
		if _, ok := Members([]byte(raw)); ok {
			t.Errorf("Members(%s) is ok", raw)
		}
	}
}

func TestElements(t *testing.T) {
	got, ok := Elements([]byte(`[ {"tool":"a"} , [1,2],"]",3 ]`))
	want := []string{`{"tool":"a"}`, `[1,2]`, `"]"`, `3`}
	if !ok || len(got) != len(want) {
		t.Fatalf("Elements = %q, %v; want %q", got, ok, want)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("element %d = %s, want %s", i, got[i], want[i])
		}
	}
	if got, ok := Elements([]byte(`[]`)); !ok || len(got) != 0 {
		t.Errorf("Elements([]) = %q, %v", got, ok)
	}
	if _, ok := Elements([]byte(`{}`)); ok {
		t.Error("Elements({}) is ok")
	}
}

// FuzzSplit is differential: Object accepts what json.Valid does when it
// is an object, and on an object or array Object, Members and Elements give
// the members and elements encoding/json reads, as raw bytes.
func FuzzSplit(f *testing.F) {
	for _, seed := range []string{
		`{"tool":"read","args":{"file_path":"a"}}`, `[{"a":1},[],"x\"]",null]`, `{"a":"\ud800\u00e9\n","a":1e-3}`,
		"{\"\xff\":1}", `{"a":1,}`, `[1,]`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{} x`, ` 0 `, `-`, `{"\u0061":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checked, isObject := Object(raw)
		valid := json.Valid(raw)
		if wantObject := valid && bytes.TrimLeft(raw, " \t\r\n")[0] == '{'; isObject != wantObject {
			t.Fatalf("Object(%q) ok = %v, want %v", raw, isObject, wantObject)
		}
		if !valid {
			return
		}
		if members, ok := Members(raw); ok != isObject || !reflect.DeepEqual(members, checked) {
			t.Fatalf("%q: Members %q, %v; Object %q", raw, members, ok, checked)
		}
		var obj []json.RawMessage // keys and values, in order
		if members, ok := Members(raw); ok {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.Token() // {
			for dec.More() {
				key, _ := dec.Token()
				var value json.RawMessage
				if err := dec.Decode(&value); err != nil {
					t.Fatal(err)
				}
				k, _ := json.Marshal(key)
				obj = append(obj, k, value)
			}
			if len(obj) != 2*len(members) {
				t.Fatalf("%q: %d members, want %d", raw, len(members), len(obj)/2)
			}
			for i, m := range members {
				k, _ := json.Marshal(m.Key)
				if !bytes.Equal(k, obj[2*i]) || !bytes.Equal(m.Value, obj[2*i+1]) {
					t.Fatalf("%q: member %d is %s: %s, want %s: %s", raw, i, k, m.Value, obj[2*i], obj[2*i+1])
				}
			}
		}
		if elems, ok := Elements(raw); ok {
			var want []json.RawMessage
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatalf("%q: %v", raw, err)
			}
			if len(elems) != len(want) {
				t.Fatalf("%q: %d elements, want %d", raw, len(elems), len(want))
			}
			for i := range want {
				if !bytes.Equal(elems[i], want[i]) {
					t.Fatalf("%q: element %d is %s, want %s", raw, i, elems[i], want[i])
				}
			}
		}
	})
}

// BenchmarkObjectWrite8MiB checks and splits a replay line of a write:
// 8 MiB of 64-byte lines, each ending in a \n escape.
func BenchmarkObjectWrite8MiB(b *testing.B) {
	line := strings.Repeat("x", 63) + `\n`
	raw := []byte(`{"tool":"write","args":{"file_path":"a.txt","content":"` + strings.Repeat(line, 8<<20/64) + `"}}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Object(raw); !ok {
			b.Fatal("not an object")
		}
	}
}
