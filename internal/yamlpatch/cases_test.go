package yamlpatch

import (
	"strconv"
	"strings"
)

// editCase is one edit with the exact text it must produce.
type editCase struct {
	name  string
	src   string
	op    string // set, insert or delete
	path  Path
	value any
	want  string
}

func (c editCase) run() (string, error) {
	var out []byte
	var err error
	switch c.op {
	case "set":
		out, err = Set([]byte(c.src), c.path, c.value)
	case "insert":
		out, err = Insert([]byte(c.src), c.path, c.value)
	case "delete":
		out, err = Delete([]byte(c.src), c.path)
	default:
		panic("unknown op " + c.op)
	}
	return string(out), err
}

const entries = `# deployment
- id: fs   # stable
  config:
    cwd: ~/p # workspace

    roots: [{path: v}]
- id: tools
  config: {readLimit: 2000}   # caps
- name: group
  config:
    - {id: audit, name: log, disabled: true}
    - id: inner
      config:
        readLimit: 10
`

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// edited returns s with its one occurrence of old replaced by new: an
// expected output written as the lines it changes.
func edited(s, old, new string) string {
	if strings.Count(s, old) != 1 {
		panic("not exactly one " + strconv.Quote(old))
	}
	return strings.Replace(s, old, new, 1)
}

var editCases = []editCase{
	{name: "block scalar keeps its comment", src: entries, op: "set", path: Path{0, "config", "cwd"}, value: "/srv",
		want: edited(entries, "    cwd: ~/p # workspace\n", "    cwd: /srv # workspace\n")},
	{name: "flow mapping value", src: entries, op: "set", path: Path{1, "config", "readLimit"}, value: 3000,
		want: edited(entries, "  config: {readLimit: 2000}   # caps\n", "  config: {readLimit: 3000}   # caps\n")},
	{name: "flow mapping stays flow", src: entries, op: "set", path: Path{1, "config"}, value: map[string]any{"readLimit": 1, "roots": []any{map[string]any{"path": "a b"}}},
		want: edited(entries, "  config: {readLimit: 2000}   # caps\n", "  config: {readLimit: 1, roots: [{path: a b}]}   # caps\n")},
	{name: "flow mapping gains a key", src: entries, op: "set", path: Path{1, "config", "writeLimit"}, value: 5,
		want: edited(entries, "  config: {readLimit: 2000}   # caps\n", "  config: {readLimit: 2000, writeLimit: 5}   # caps\n")},
	{name: "flow mapping gains a first key", src: entries, op: "insert", path: Path{1, "config", "id"}, value: "x",
		want: edited(entries, "  config: {readLimit: 2000}   # caps\n", "  config: {id: x, readLimit: 2000}   # caps\n")},
	{name: "config updated key by key, comments and flow kept", src: entries, op: "set", path: Path{0, "config"}, value: map[string]any{"cwd": "/a", "roots": []any{"x", "y"}},
		want: edited(entries, `    cwd: ~/p # workspace

    roots: [{path: v}]
`, `    cwd: /a # workspace

    roots: [x, "y"]
`)},
	{name: "config with a key removed and one added", src: entries, op: "set", path: Path{0, "config"}, value: map[string]any{"cwd": "~/p", "writeLimit": 5},
		want: edited(entries, "    cwd: ~/p # workspace\n\n    roots: [{path: v}]\n", "    cwd: ~/p # workspace\n    writeLimit: 5\n\n")},
	{name: "block mapping replaced in its indentation", src: entries, op: "set", path: Path{0, "config"}, value: map[string]any{"a": 1, "b": []any{"x"}},
		want: edited(entries, `    cwd: ~/p # workspace

    roots: [{path: v}]
`, `    a: 1
    b:
      - x
`)},
	{name: "nested group entry", src: entries, op: "set", path: Path{2, "config", 1, "config", "readLimit"}, value: 20,
		want: edited(entries, "        readLimit: 10\n", "        readLimit: 20\n")},
	{name: "nested flow entry in a group", src: entries, op: "set", path: Path{2, "config", 0, "disabled"}, value: false,
		want: edited(entries, "    - {id: audit, name: log, disabled: true}\n", "    - {id: audit, name: log, disabled: false}\n")},
	{name: "disabled added at the end of an entry", src: entries, op: "set", path: Path{0, "disabled"}, value: true,
		want: edited(entries, "    roots: [{path: v}]\n", `    roots: [{path: v}]
  disabled: true
`)},
	{name: "disabled added to a nested entry", src: entries, op: "set", path: Path{2, "config", 1, "disabled"}, value: true,
		want: edited(entries, "        readLimit: 10\n", `        readLimit: 10
      disabled: true
`)},
	{name: "id inserted first", src: entries, op: "insert", path: Path{2, "id"}, value: "group-1a2b",
		want: edited(entries, "- name: group\n", `- id: group-1a2b
  name: group
`)},
	{name: "scalar becomes a mapping, comment kept on the key", src: entries, op: "set", path: Path{0, "config", "cwd"}, value: map[string]any{"path": "/a", "readOnly": true},
		want: edited(entries, "    cwd: ~/p # workspace\n", `    cwd: # workspace
      path: /a
      readOnly: true
`)},
	{name: "mapping becomes a scalar", src: entries, op: "set", path: Path{2, "config", 1, "config"}, value: nil,
		want: edited(entries, `      config:
        readLimit: 10
`, "      config: null\n")},
	{name: "flow mapping becomes a scalar", src: entries, op: "set", path: Path{1, "config"}, value: "none",
		want: edited(entries, "  config: {readLimit: 2000}   # caps\n", "  config: none   # caps\n")},
	{name: "sequence item replaced by a mapping", src: "- a   # first\n- b\n", op: "set", path: Path{0}, value: map[string]any{"x": 1, "y": 2},
		want: `- x: 1 # first
  "y": 2
- b
`},
	{name: "mapping item replaced by a scalar", src: "- x: 1\n  y: 2\n- b\n", op: "set", path: Path{0}, value: "a",
		want: "- a\n- b\n"},
	{name: "strings that need quotes", src: "a: x\nb: x\nc: x\nd: x\n", op: "set", path: Path{"b"}, value: "true",
		want: `a: x
b: "true"
c: x
d: x
`},
	{name: "string with a colon", src: "a: x\nb: x\n", op: "set", path: Path{"a"}, value: "k: v # no comment",
		want: "a: 'k: v # no comment'\nb: x\n"},
	{name: "empty string", src: "a: x\nb: x\n", op: "set", path: Path{"a"}, value: "",
		want: "a: \"\"\nb: x\n"},
	{name: "single quotes kept", src: "a: 'x'\n", op: "set", path: Path{"a"}, value: "it's",
		want: "a: 'it''s'\n"},
	{name: "double quotes kept", src: "a: \"x\"  # dq\n", op: "set", path: Path{"a"}, value: "y",
		want: "a: \"y\"  # dq\n"},
	{name: "quotes in flow", src: "a: [x, y]\n", op: "set", path: Path{"a", 1}, value: "p, q",
		want: "a: [x, \"p, q\"]\n"},
	{name: "multi-line string as a literal block", src: "a: x # note\nb: y\n", op: "set", path: Path{"a"}, value: "one\ntwo\n",
		want: `a: | # note
  one
  two
b: y
`},
	{name: "literal block replaced", src: "a: |\n  one\n  two\n\nb: y\n", op: "set", path: Path{"a"}, value: "three",
		want: `a: three

b: y
`},
	{name: "literal block kept as literal", src: "a: |-\n  one\n  two\nb: y\n", op: "set", path: Path{"a"}, value: "three\nfour",
		want: `a: |-
  three
  four
b: y
`},
	{name: "folded plain scalar replaced", src: "a: one\n  two\n  three\nb: y\n", op: "set", path: Path{"a"}, value: 1,
		want: "a: 1\nb: y\n"},
	{name: "multi-line double quoted replaced", src: "a: \"one\n  two\"\nb: y\n", op: "set", path: Path{"a"}, value: 1,
		want: "a: 1\nb: y\n"},
	{name: "CRLF set", src: crlf(entries), op: "set", path: Path{0, "config"}, value: map[string]any{"a": "/a", "b": []any{"x"}},
		want: crlf(edited(entries, `    cwd: ~/p # workspace

    roots: [{path: v}]
`, `    a: /a
    b:
      - x
`))},
	{name: "CRLF add", src: crlf(entries), op: "set", path: Path{0, "disabled"}, value: true,
		want: crlf(edited(entries, "    roots: [{path: v}]\n", `    roots: [{path: v}]
  disabled: true
`))},
	{name: "CRLF delete", src: crlf(entries), op: "delete", path: Path{0, "config", "cwd"},
		want: crlf(edited(entries, "    cwd: ~/p # workspace\n", ""))},
	{name: "CR line endings", src: "a: 1\rb: 2\r", op: "set", path: Path{"a"}, value: map[string]any{"c": 3},
		want: "a:\r  c: 3\rb: 2\r"},
	{name: "document start marker", src: "# c\n---\na: 1\nb: 2\n...\n", op: "set", path: Path{"b"}, value: map[string]any{"c": 3},
		want: `# c
---
a: 1
b:
  c: 3
...
`},
	{name: "indentation of 4", src: "a:\n    b:\n        c: 1\n    d: 2\n", op: "set", path: Path{"a", "e"}, value: map[string]any{"f": []any{1}},
		want: `a:
    b:
        c: 1
    d: 2
    e:
        f:
            - 1
`},
	{name: "indentation of 4 replaced", src: "a:\n    b:\n        c: 1\n    d: 2\n", op: "set", path: Path{"a", "d"}, value: map[string]any{"f": 1},
		want: `a:
    b:
        c: 1
    d:
        f: 1
`},
	{name: "sequences not indented", src: "a:\n- x\n- y\nb: 1\n", op: "set", path: Path{"b"}, value: []any{1, 2},
		want: "a:\n- x\n- y\nb:\n- 1\n- 2\n"},
	{name: "sequences indented", src: "a:\n  - x\n  - y\nb: 1\n", op: "set", path: Path{"b"}, value: []any{1, 2},
		want: "a:\n  - x\n  - y\nb:\n  - 1\n  - 2\n"},
	{name: "null value filled", src: "a:\nb: 1\n", op: "set", path: Path{"a"}, value: map[string]any{"c": 1},
		want: `a:
  c: 1
b: 1
`},
	{name: "null value filled inline", src: "a:   # empty\nb: 1\n", op: "set", path: Path{"a"}, value: 3,
		want: "a: 3   # empty\nb: 1\n"},
	{name: "null item filled", src: "-\n- b\n", op: "set", path: Path{0}, value: "a",
		want: "- a\n- b\n"},
	{name: "anchor kept", src: "a: &x 1\nb: 2\n", op: "set", path: Path{"a"}, value: 5,
		want: "a: &x 5\nb: 2\n"},
	{name: "root replaced", src: "# top\n{a: 1}\n", op: "set", path: Path{}, value: map[string]any{"b": 2},
		want: "# top\n{b: 2}\n"},
	{name: "comments before, after and inline kept", src: "# before a\na: 1 # inline a\n# after a\nb: 2\n", op: "set", path: Path{"a"}, value: map[string]any{"x": 1},
		want: "# before a\na: # inline a\n  x: 1\n# after a\nb: 2\n"},
	{name: "comments around a deleted key kept", src: "# before a\na: 1 # inline a\n# after a\nb: 2\n", op: "delete", path: Path{"a"},
		want: "# before a\n# after a\nb: 2\n"},
	{name: "item appended to a block sequence", src: entries, op: "set", path: Path{2, "config", 2}, value: map[string]any{"id": "new", "name": "x"},
		want: edited(entries, "        readLimit: 10\n", "        readLimit: 10\n    - id: new\n      name: x\n")},
	{name: "item appended to a flow sequence", src: "a: [x, y]   # two\n", op: "set", path: Path{"a", 2}, value: "z",
		want: "a: [x, y, z]   # two\n"},
	{name: "item appended to an empty sequence", src: "a: []\n", op: "set", path: Path{"a", 0}, value: map[string]any{"b": 1},
		want: "a: [{b: 1}]\n"},
	{name: "a longer list keeps its items' comments", src: "roots:\n  - path: vendor   # vendored\n    readOnly: true\nx: 1\n", op: "set", path: Path{"roots"}, value: []any{map[string]any{"path": "vendor", "readOnly": true}, map[string]any{"path": "docs"}},
		want: "roots:\n  - path: vendor   # vendored\n    readOnly: true\n  - path: docs\nx: 1\n"},
	{name: "a shorter list loses its last items", src: "a: [1, 2, 3]\nb:\n- 1   # one\n- 2\n- 3\n", op: "set", path: Path{"b"}, value: []any{1},
		want: "a: [1, 2, 3]\nb:\n- 1   # one\n"},
	{name: "an item taken out of a list leaves the others alone", src: "- a   # first\n- {b: 1}   # second\n- c   # third\n- b\n", op: "set", path: Path{}, value: []any{"a", "c"},
		want: "- a   # first\n- c   # third\n"},
	{name: "delete a key", src: entries, op: "delete", path: Path{0, "config", "cwd"},
		want: edited(entries, "    cwd: ~/p # workspace\n", "")},
	{name: "delete the first key after a dash", src: entries, op: "delete", path: Path{0, "id"},
		want: edited(entries, `- id: fs   # stable
  config:
`, "- config:\n")},
	{name: "delete an entry", src: entries, op: "delete", path: Path{1},
		want: edited(entries, `- id: tools
  config: {readLimit: 2000}   # caps
`, "")},
	{name: "delete from a flow mapping", src: entries, op: "delete", path: Path{2, "config", 0, "name"},
		want: edited(entries, "    - {id: audit, name: log, disabled: true}\n", "    - {id: audit, disabled: true}\n")},
	{name: "delete the last of a flow mapping", src: entries, op: "delete", path: Path{2, "config", 0, "disabled"},
		want: edited(entries, "    - {id: audit, name: log, disabled: true}\n", "    - {id: audit, name: log}\n")},
	{name: "delete the only key", src: entries, op: "delete", path: Path{2, "config", 1, "config", "readLimit"},
		want: edited(entries, `      config:
        readLimit: 10
`, "      config: {}\n")},
	{name: "delete the only item", src: "a:\n  - x\nb: 1\n", op: "delete", path: Path{"a", 0},
		want: "a: []\nb: 1\n"},
	{name: "delete from a flow sequence", src: "a: [x, y, z]\n", op: "delete", path: Path{"a", 1},
		want: "a: [x, z]\n"},
	{name: "delete the first of nested sequences", src: "- - a\n  - b\n", op: "delete", path: Path{0, 0},
		want: "- - b\n"},
	{name: "delete a key with a block value", src: "a:\n  b: 1\n  # inside\n  c: 2\nd: 3 # last\n", op: "delete", path: Path{"a"},
		want: "d: 3 # last\n"},
}
