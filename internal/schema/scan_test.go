package schema

import (
	"encoding/json"
	"testing"
)

func TestStringProperty(t *testing.T) {
	for _, tt := range []struct {
		raw, want string
		ok        bool
	}{
		{`{"file_path":"a.txt","content":"x"}`, "a.txt", true},
		{`{"content":"say \"file_path\":\"b\"","file_path":"a\u002etxt"}`, "a.txt", true},
		{`{"FILE_PATH":"x","file_path":"a"}`, "a", true},
		{`{"file_path":"first","file_path":"last"}`, "last", true},
		{`{"file_path":"a","file_path":7}`, "", false},
		{`{"file\u005fpath":"escaped key"}`, "escaped key", true},
		{"{\"file_path\":\"\xff\u00e9\"}", "\uFFFD\u00e9", true},
		{`{"nested":{"file_path":"no"},"list":[{"file_path":"no"}]}`, "", false},
		{`{"file_path":null}`, "", false},
		{`{}`, "", false},
		{`["file_path","a"]`, "", false},
		{``, "", false},
	} {
		got, ok := StringProperty([]byte(tt.raw), "file_path")
		if got != tt.want || ok != tt.ok {
			t.Errorf("StringProperty(%s) = %q, %v; want %q, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzStringProperty: on any JSON object, the value encoding/json decodes
// for the key.
func FuzzStringProperty(f *testing.F) {
	for _, seed := range []string{`{"p":"a"}`, `{"p":1,"p":"b\n"}`, `{"q":{"p":"x"},"p":"\ud800"}`, `{"P":"x"}`, `{"p":"\"\\"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return // StringProperty is for validated arguments
		}
		want, wantOK := m["p"].(string)
		if got, ok := StringProperty(raw, "p"); got != want || ok != wantOK {
			t.Fatalf("%q: %q, %v; want %q, %v", raw, got, ok, want, wantOK)
		}
	})
}
