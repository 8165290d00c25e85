package yamlpatch

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

// docs are the documents the property test edits at every path.
var docs = []string{
	entries,
	crlf(entries),
	"a:\n    b:\n        c: 1   # c\n    d: [x, {y: 2}]\n\n# between\ne: |\n    lit\n    block\nf: 'q''s'\n",
	"---\nlist:\n- one\n- two: 2\n  three: 3\n-\n- - nested\n  - seq\nafter: \"dq\\n\"\n...\n",
	"# flow\n{a: 1, b: [1, 2, {c: d}], e: {}, f: [], g: \"x, y\"}\n",
	"k: plain value that\n  folds over lines\nm: >-\n  folded\n  text\nn: \"quoted\n  over lines\"\no:\np: ~\n",
	"- ключ: значение   # unicode\n  é: [ü, \"ß\"]\n- &anchor {x: 1}\n- !!str 5\n",
	"root:\n  # head of list\n  list:\n    - a: 1\n      b: |+\n        keep\n\n    - c\n  tail: end\n",
	"\"a\": 1\n'b c': {x: [1,\n  2], # inside\n  y: z}\n? complex\n: value\nt:\tx # tab\nlast: no newline",
	"-\n  a: 1\n-\n  - x\n- - y\n  - z\n-   spaced: 1\n    more: 2\n- key:\n    value on next line\n- |2\n    indented\n   less\n",
	"\uFEFFbom: 1\nnel: \"a\u0085b\"\n",
	"scalar root # comment\n",
	"a: 1\n---\nb: 2\n",
	"m:\n  k:   \n  j: a - b\n  s: '  spaced  '\n",
}

// shared is a document whose nodes are shared through an anchor and
// aliases: an edit that would change them in more than one place is
// refused with ErrUnsupported.
const shared = "base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\nlist: [*b]\nfree: 1\n"

// values are what the property test writes.
var values = []any{
	42,
	"new value",
	"needs: quotes, #",
	"two\nlines\n",
	"keeps\n\n",
	"  leading blanks\nx",
	"abc:",
	"ü: ß\u00a0",
	map[string]any{"k": 1, "l": []any{1, 2}},
	[]any{"a", map[string]any{"b": 2, "c": []any{}}},
	map[string]any{},
	[]any{},
	nil,
	true,
}

// paths lists the path of every node under n.
func paths(n *yaml.Node, p Path, out *[]Path) {
	*out = append(*out, p)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			paths(n.Content[i+1], append(p[:len(p):len(p)], n.Content[i].Value), out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			paths(c, append(p[:len(p):len(p)], i), out)
		}
	}
}

// preorder lists the nodes under n in document order.
func preorder(n *yaml.Node, out *[]*yaml.Node) {
	*out = append(*out, n)
	for _, c := range n.Content {
		preorder(c, out)
	}
}

// bounds returns the lines (1-based) an edit of the node at p may touch:
// from the line of the node before its key or item to the line of the
// node after it, or to the end of the document.
func bounds(root *yaml.Node, p Path, lines int) (lo, hi int) {
	var order []*yaml.Node
	preorder(root, &order)
	first, n := nodeAt(root, p)
	var sub []*yaml.Node
	preorder(n, &sub)
	lo, hi = 1, lines
	for i, o := range order {
		if o == first && i > 0 {
			lo = order[i-1].Line
		}
		if o == sub[len(sub)-1] && i+1 < len(order) {
			hi = order[i+1].Line
		}
	}
	return lo, hi
}

// changedLines returns the first and last line (1-based) of a that differ
// from b, after the lines they share at both ends.
func changedLines(a, b []byte) (first, last int) {
	x, y := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	s := 0
	for s < len(x)-p && s < len(y)-p && x[len(x)-1-s] == y[len(y)-1-s] {
		s++
	}
	return p + 1, len(x) - s
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, b)
	}
	return v
}

// TestProperty edits every node of every document with every value: the
// output parses, means the input with that one change, and differs from
// it only between the neighbours of the edited node.
func TestProperty(t *testing.T) {
	type edit struct {
		op    string
		path  Path
		value any
		span  Path // the node whose neighbours bound the change
	}
	made, refused := 0, 0
	for di, src := range append(docs[:len(docs):len(docs)], shared) {
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(src), &root); err != nil {
			t.Fatalf("doc %d: %v", di, err)
		}
		var all []Path
		paths(root.Content[0], Path{}, &all)
		lines := strings.Count(src, "\n") + 1
		for _, p := range all {
			var edits []edit
			for _, v := range values {
				edits = append(edits, edit{"set", p, v, p})
			}
			if len(p) > 0 {
				edits = append(edits, edit{"delete", p, nil, p[:len(p)-1]})
			}
			_, n := nodeAt(root.Content[0], p)
			if n.Kind == yaml.SequenceNode {
				edits = append(edits, edit{"set", append(p[:len(p):len(p)], len(n.Content)), "appended", p})
			}
			if n.Kind == yaml.MappingNode {
				edits = append(edits, edit{"set", append(p[:len(p):len(p)], "zz"), "added", p}, edit{"insert", append(p[:len(p):len(p)], "aa"), map[string]any{"id": 1}, p})
			}
			for _, e := range edits {
				c := editCase{src: src, op: e.op, path: e.path, value: e.value}
				out, err := c.run()
				name := fmt.Sprintf("doc %d %s %v %#v", di, e.op, e.path, e.value)
				if err != nil {
					if src != shared || !errors.Is(err, ErrUnsupported) {
						t.Errorf("%s: %v", name, err)
					}
					refused++
					continue
				}
				made++
				want := decode(t, []byte(src))
				want, _ = apply(want, e.path, map[string]op{"set": opSet, "insert": opInsert, "delete": opDelete}[e.op], roundTrip(t, e.value))
				if got := decode(t, []byte(out)); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: means %#v, want %#v\n%s", name, got, want, out)
				}
				lo, hi := bounds(root.Content[0], e.span, lines)
				if first, last := changedLines([]byte(src), []byte(out)); first <= last && (first < lo || last > hi) {
					t.Errorf("%s: lines %d-%d changed, outside %d-%d\n%s", name, first, last, lo, hi, out)
				}
			}
		}
	}
	t.Logf("%d edits made, %d refused", made, refused)
}

// nodeAt returns the node at p and the node that starts its entry: its
// key in a mapping, itself in a sequence.
func nodeAt(n *yaml.Node, p Path) (entry, node *yaml.Node) {
	entry = n
	for _, s := range p {
		switch s := s.(type) {
		case int:
			n = n.Content[s]
			entry = n
		case string:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == s {
					entry, n = n.Content[i], n.Content[i+1]
					break
				}
			}
		}
	}
	return entry, n
}

func roundTrip(t *testing.T, v any) any {
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzSet edits random documents at random paths: no panic, every error an
// *Error, every output parsing, and a Set made twice the same as once.
func FuzzSet(f *testing.F) {
	for _, d := range docs {
		for _, p := range []string{"0", "0/config", "a", "a/b", "list/2", "root/list/0/b", "k", "zz"} {
			f.Add([]byte(d), p, uint8(len(p)))
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, spec string, which uint8) {
		var p Path
		if spec != "" {
			for _, s := range strings.Split(spec, "/") {
				if i, err := strconv.Atoi(s); err == nil {
					p = append(p, i)
				} else {
					p = append(p, s)
				}
			}
		}
		v := values[int(which)%len(values)]
		var out []byte
		var err error
		switch which / 64 {
		case 0, 1:
			out, err = Set(src, p, v)
		case 2:
			out, err = Insert(src, p, v)
		default:
			out, err = Delete(src, p)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		var n yaml.Node
		if err := yaml.NewDecoder(bytes.NewReader(out)).Decode(&n); err != nil {
			t.Fatalf("output does not parse: %v\n%q", err, out)
		}
		if which/64 < 2 { // the value is there now: setting it again changes nothing
			if again, err := Set(out, p, v); err != nil || !bytes.Equal(again, out) {
				t.Fatalf("a second Set gave %q, %v; want %q", again, err, out)
			}
		}
	})
}
