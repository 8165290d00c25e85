package schema

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want bool
	}{
		{`{"a":[1,-2.5e3,true,false,null,"x"],"b":{}}`, true},
		{" \t\n{}\r\n ", true},
		{`"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800"`, true},
		{"\"\xff\xfe\"", true}, // invalid UTF-8 decodes as U+FFFD: valid JSON
		{`{"a":1,}`, false},
		{`{"a":1`, false},
		{`{"a":1} {}`, false},
		{`"\x"`, false},
		{`"\u00zz"`, false},
		{"\"a\tb\"", false}, // a raw control character
		{`"abc`, false},
		{`01`, false},
		{`{a:1}`, false},
		{``, false},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), false},
	} {
		if got := Valid([]byte(tt.raw)); got != tt.want {
			t.Errorf("Valid(%q) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}

func TestMembers(t *testing.T) {
	raw := []byte(` { "tool" : "read", "args":{"file_path":"a\n"} ,"a\u0062":[1, {"x":"}"}], "tool":null } `)
	got, ok := Members(raw)
	want := []Member{{"tool", []byte(`"read"`)}, {"args", []byte(`{"file_path":"a\n"}`)}, {"ab", []byte(`[1, {"x":"}"}]`)}, {"tool", []byte(`null`)}}
	if !ok || len(got) != len(want) {
		t.Fatalf("Members = %q, %v; want %q", got, ok, want)
	}
	for i := range want {
		if got[i].Key != want[i].Key || !bytes.Equal(got[i].Value, want[i].Value) {
			t.Errorf("member %d = %q: %s, want %q: %s", i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
		}
	}
	if &got[1].Value[0] != &raw[bytes.Index(raw, []byte(`{"file_path"`))] {
		t.Error("a value is a copy, not the bytes of raw")
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

// FuzzSplit is differential: Valid agrees with json.Valid, and on an
// object or array Members and Elements give the members and elements
// encoding/json reads, as raw bytes.
func FuzzSplit(f *testing.F) {
	for _, seed := range []string{
		`{"tool":"read","args":{"file_path":"a"}}`, `[{"a":1},[],"x\"]",null]`, `{"a":"\ud800\u00e9\n","a":1e-3}`,
		"\"\xff\"", `{"a":1,}`, `[1,]`, `"\u12"`, "\"\x01\"", `{} x`, ` 0 `, `-`, `{"\u0061":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		valid := Valid(raw)
		if valid != json.Valid(raw) {
			t.Fatalf("Valid(%q) = %v, json.Valid says %v", raw, valid, !valid)
		}
		if !valid {
			return
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

// BenchmarkValidWrite8MiB checks the syntax of a write's arguments: 8 MiB
// of 64-byte lines, each ending in a \n escape.
func BenchmarkValidWrite8MiB(b *testing.B) {
	line := strings.Repeat("x", 63) + `\n`
	raw := []byte(`{"file_path":"a.txt","content":"` + strings.Repeat(line, 8<<20/64) + `"}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if !Valid(raw) {
			b.Fatal("not valid")
		}
	}
}
