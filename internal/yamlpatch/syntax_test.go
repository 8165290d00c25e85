package yamlpatch

import (
	"errors"
	"testing"
)

// A syntax error names its line counted from 1, whichever stage of the
// YAML parser found it and whatever ends the lines.
func TestSyntaxErrorLine(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"- [a\n", "line 1: did not find expected ',' or ']'"},
		{"- id: a\n  name: [counter\n", "line 2: did not find expected ',' or ']'"},
		{"- id: a\r\n  name: [counter\r\n", "line 2: did not find expected ',' or ']'"},
		{"- id: a\r  name: [counter\r", "line 2: did not find expected ',' or ']'"},
		{"- x\n- {id: a, name: b\n", "line 2: did not find expected ',' or '}'"},
		{"- id: t\n  config:\n     a: 5\n    b: 9\n", "line 4: did not find expected key"},
		{"- id: tools\nconfig:\n  a: 5\n", "line 2: did not find expected '-' indicator"},
		{"- !x!y z\n", "line 1: found undefined tag handle"},
		{"- a: b: c\n- x\n", "line 1: mapping values are not allowed in this context"},
		{"- a\n- b\n  c: d\n", "line 3: mapping values are not allowed in this context"},
		{"- a\r- b\r  c: d\r", "line 3: mapping values are not allowed in this context"},
		{"- 'abc\n", "line 1: found unexpected end of stream"},
		{"- id: fs\n  name: x\n\tconfig: {}\n", "line 3: found a tab character that violates indentation"},
		{"\uFEFF- a\n- [b\n", "line 2: did not find expected ',' or ']'"},
	} {
		_, err := Delete([]byte(c.src), Path{0})
		want := "yamlpatch: [0]: not valid YAML: " + c.want
		if !errors.Is(err, ErrSyntax) || err.Error() != want {
			t.Errorf("%q:\n got: %v\nwant: %s", c.src, err, want)
		}
	}
}
