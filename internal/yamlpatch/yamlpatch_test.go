package yamlpatch

import (
	"errors"
	"testing"
)

func TestEdit(t *testing.T) {
	for _, c := range editCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.run()
			if err != nil {
				t.Fatalf("%s %v: %v", c.op, c.path, err)
			}
			if got != c.want {
				t.Errorf("%s %v\n got: %q\nwant: %q", c.op, c.path, got, c.want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit editCase
		is   error
		msg  string
	}{
		{"missing key", editCase{src: entries, op: "set", path: Path{0, "nope", "x"}},
			ErrNotFound, `yamlpatch: [0].nope.x (line 2, col 3): not found: no key "nope"`},
		{"index out of range", editCase{src: entries, op: "delete", path: Path{5}},
			ErrNotFound, `yamlpatch: [5] (line 2, col 1): not found: index 5 of a sequence of 3`},
		{"index into a mapping", editCase{src: entries, op: "set", path: Path{0, 1}},
			ErrKind, `yamlpatch: [0][1] (line 2, col 3): wrong kind of node: index 1 into a mapping`},
		{"key in a scalar", editCase{src: entries, op: "set", path: Path{0, "id", "x"}},
			ErrKind, `yamlpatch: [0].id.x (line 2, col 7): wrong kind of node: key "x" in a scalar`},
		{"insert an existing key", editCase{src: entries, op: "insert", path: Path{0, "id"}, value: "x"},
			ErrExists, `yamlpatch: [0].id (line 2, col 3): key already present: "id"`},
		{"insert an item", editCase{src: entries, op: "insert", path: Path{0}, value: "x"},
			ErrKind, `yamlpatch: [0] (line 2, col 1): wrong kind of node: Insert adds a mapping key, not an item`},
		{"step of another type", editCase{src: entries, op: "set", path: Path{0.5}},
			ErrKind, `yamlpatch: [float64?] (line 2, col 1): wrong kind of node: a step of type float64 (want int or string)`},
		{"not YAML", editCase{src: "a: [1\n", op: "set", path: Path{"a"}},
			ErrSyntax, `yamlpatch: a: not valid YAML: line 1: did not find expected ',' or ']'`},
		{"not UTF-8", editCase{src: "a: \xff\n", op: "set", path: Path{"a"}},
			ErrSyntax, `yamlpatch: a: not valid YAML: not UTF-8`},
		{"empty document", editCase{src: "# nothing\n", op: "delete", path: Path{"a"}},
			ErrNotFound, `yamlpatch: a: not found: the document is empty`},
		{"through an alias", editCase{src: "a: &x {b: 1}\nc: *x\n", op: "set", path: Path{"c", "b"}, value: 2},
			ErrUnsupported, `yamlpatch: c.b (line 2, col 4): cannot patch as text: the path goes through the alias *x`},
		{"an anchored value others share", editCase{src: "a: &x {b: 1}\nc: *x\n", op: "set", path: Path{"a", "b"}, value: 2},
			ErrUnsupported, `yamlpatch: a.b (line 1, col 11): cannot patch as text: the edit would change more than the value at the path (an anchor or alias, or a style the package cannot keep)`},
		{"delete the root", editCase{src: "a: 1\n", op: "delete", path: Path{}},
			ErrKind, `yamlpatch: (root) (line 1, col 1): wrong kind of node: the root has no key to add or remove`},
		{"a value yaml cannot encode", editCase{src: "a: 1\n", op: "set", path: Path{"a"}, value: func() {}},
			ErrUnsupported, `yamlpatch: a: cannot patch as text: cannot encode the value: cannot marshal type: func()`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.edit.run()
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, c.is) {
				t.Fatalf("err = %v, want an *Error matching %v", err, c.is)
			}
			if err.Error() != c.msg {
				t.Errorf("message\n got: %s\nwant: %s", err, c.msg)
			}
		})
	}
}

func TestPathString(t *testing.T) {
	for _, c := range []struct {
		p    Path
		want string
	}{
		{Path{}, "(root)"},
		{Path{2, "config"}, "[2].config"},
		{Path{"a", 0, "b-c_d"}, "a[0].b-c_d"},
		{Path{"a b", "x.y", ""}, `["a b"]["x.y"][""]`},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.p, got, c.want)
		}
	}
}
