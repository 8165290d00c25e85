package loader_test

import (
	"testing"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// A YAML syntax error names the line it is on (that of the construct the
// parser was in, such as an unclosed bracket, or of the problem), counted
// from 1, whichever stage of the YAML parser found it.
func TestSyntaxErrorLines(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"- [a\n", ":1: did not find expected ',' or ']'"},
		{"- id: a\n  name: [counter\n", ":2: did not find expected ',' or ']'"},
		{"- x\n- {id: a, name: b\n", ":2: did not find expected ',' or '}'"},
		{"- {id: a, name: b}}\n- x\n- y\n", ":1: did not find expected '-' indicator"},
		{"- id: tools\n  name: toolfs\nconfig:\n  readLimit: 5\n", ":3: did not find expected '-' indicator"},
		{"- id: t\n  name: toolfs\n  config:\n     readLimit: 5\n    readMaxBytes: 9\n", ":5: did not find expected key"},
		{"- !x!y z\n", ":1: found undefined tag handle"},
		{"- a: b: c\n- x\n", ":1: mapping values are not allowed in this context"},
		{"@x\n- y\n", ":1: found character that cannot start any token"},
		{"- a\n- b\n  c: d\n", ":3: mapping values are not allowed in this context"},
		{"- a\r\n- b\r\n  c: d\r\n", ":3: mapping values are not allowed in this context"},
		{"- a\r- b\r  c: d\r", ":3: mapping values are not allowed in this context"},
		{"- 'abc\n", ":1: found unexpected end of stream"},
		{"- {id: a, name: counter}\n---\n- {id: b, name: counter}\n", ":2:1: a second YAML document (after ---): the file is one list of entries"},
		{"- {id: a, name: counter}\n---\n- [b\n", ":3: did not find expected ',' or ']'"},
		{"- {id: a, name: counter, config: *nope}\n", ":1:34: unknown anchor 'nope' referenced"},
		{"- &n {id: a, name: counter, config: {greeting: *no}}\n- *n\n", ":1:48: unknown anchor 'no' referenced"},
		{"- id: fs\n  name: fslocal\n\tconfig: {}\n", ":3: found a tab character that violates indentation"},
		{"- id: fs\n  name: fslocal\n  config:\n  \t cwd: x\n", ":4: found character that cannot start any token"},
	} {
		file := write(t, t.TempDir()+"/gordis.yaml", tc.text)
		_, err := loader.Open(runtimetest.New(t), file, plugins(t, &recorder{}))
		if err == nil || err.Error() != file+tc.want {
			t.Errorf("%q: got %v, want %s", tc.text, err, file+tc.want)
		}
	}
}

// One document with its markers is one document.
func TestDocumentMarkers(t *testing.T) {
	for _, text := range []string{"---\n- {id: a, name: counter}\n", "---\n- {id: a, name: counter}\n...\n", "--- []\n", "---\n"} {
		file := write(t, t.TempDir()+"/gordis.yaml", text)
		if _, err := loader.Open(runtimetest.New(t), file, plugins(t, &recorder{})); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}
