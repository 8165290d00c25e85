package loader

import "testing"

// keySchema has a key holding a dot, a $ref and a list of objects.
const keySchema = `{
  "properties": {
    "a.b": {"properties": {"limit": {"type": "integer"}}},
    "a": {"$ref": "#/$defs/inner"},
    "list": {"items": {"properties": {"readOnly": {"type": "boolean"}}}}
  },
  "$defs": {"inner": {"properties": {"colour": {"type": "string"}}}}
}`

func TestKeyHint(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"limt", ` (did you mean "list"?)`},
		{"mode", ""},
		{"lst", ` (did you mean "list"?)`},
		{"a.b.limt", ` (did you mean "limit"?)`},
		{"a.color", ` (did you mean "colour"?)`},
		{"list[3].readonly", ` (did you mean "readOnly"?)`},
		{"list[3", ""},
		{"list.x", ""},
	} {
		if got := keyHint([]byte(keySchema), tc.path); got != tc.want {
			t.Errorf("keyHint(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// FuzzKeyHint: any path, against a schema or not, gives a hint or none;
// never a panic nor an endless walk.
func FuzzKeyHint(f *testing.F) {
	for _, p := range []string{"a.b.limt", "list[0].readonly", "[", "a[", "]"} {
		f.Add([]byte(keySchema), p)
	}
	f.Add([]byte(`{"$ref": "#/$defs/x", "$defs": {"x": {"$ref": "#/$defs/x"}}}`), "a")
	f.Fuzz(func(t *testing.T, doc []byte, path string) {
		keyHint(doc, path)
	})
}
