package yamlpatch

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

type op int

const (
	opSet op = iota
	opInsert
	opDelete
)

// loc is where a path leads.
type loc struct {
	parent *yaml.Node // the collection holding the last step; nil for the root
	i      int        // index in parent.Content of the item or of the key; -1 when the key is absent
	node   *yaml.Node // the value at the path; nil when the key is absent
}

// at is the node an error about l points at.
func (l loc) at() *yaml.Node {
	if l.node != nil {
		return l.node
	}
	return l.parent
}

// edit makes one edit of src.
func edit(src []byte, path Path, o op, value any) ([]byte, error) {
	d, vn, err := prepare(src, path, o, value)
	if err != nil {
		return nil, err
	}
	if d, err = d.edit(path, o, vn); err != nil {
		return nil, err
	}
	return d.src, nil
}

// prepare parses src and encodes value (but for a delete).
func prepare(src []byte, path Path, o op, value any) (*doc, *yaml.Node, error) {
	d, err := parse(src)
	if err != nil {
		return nil, nil, &Error{Path: path, Err: err}
	}
	if o == opDelete {
		return d, nil, nil
	}
	vn, err := encode(value)
	if err != nil {
		return nil, nil, &Error{Path: path, Err: err}
	}
	return d, vn, nil
}

// fail makes the *Error for an edit at path that failed at node n.
func fail(path Path, n *yaml.Node, err error) error {
	e := &Error{Path: path, Err: err}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	return e
}

// edit makes one edit, vn being the new value (nil for opDelete), and
// returns the edited document.
func (d *doc) edit(path Path, o op, vn *yaml.Node) (*doc, error) {
	l, bad, err := d.resolve(path, o)
	if err != nil {
		return nil, fail(path, bad, err)
	}
	start, end, text, err := d.patch(l, path, o, vn)
	if err != nil {
		return nil, fail(path, l.at(), err)
	}
	src := d.src
	if end == len(src) && strings.Contains(text, "\n") && d.lines[len(d.lines)-1] != len(src) {
		text += "\n" // the last line of a block scalar needs its break
	}
	text = strings.ReplaceAll(text, "\n", d.nl)
	out := make([]byte, 0, len(src)-(end-start)+len(text))
	out = append(append(append(out, src[:start]...), text...), src[end:]...)
	next, err := d.verify(out, path, o, vn)
	if err != nil {
		return nil, fail(path, l.at(), err)
	}
	return next, nil
}

// encode turns value into a node. The encoder panics on values it has no
// representation for (a func, a channel); that is the caller's error.
func encode(value any) (n *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: cannot encode the value: %v", ErrUnsupported, r)
		}
	}()
	n = new(yaml.Node)
	if err := n.Encode(value); err != nil {
		return nil, fmt.Errorf("%w: cannot encode the value: %v", ErrUnsupported, err)
	}
	return n, nil
}

// resolve follows path from the root. On failure it returns the node where
// the step failed.
func (d *doc) resolve(path Path, o op) (loc, *yaml.Node, error) {
	cur := d.root
	if cur == nil {
		if len(path) == 0 && o == opSet {
			return loc{}, nil, fmt.Errorf("%w: the document is empty", ErrUnsupported)
		}
		return loc{}, nil, fmt.Errorf("%w: the document is empty", ErrNotFound)
	}
	if len(path) == 0 && o != opSet {
		return loc{}, cur, fmt.Errorf("%w: the root has no key to add or remove", ErrKind)
	}
	l := loc{i: -1, node: cur}
	for si, step := range path {
		if cur.Kind == yaml.AliasNode {
			return loc{}, cur, fmt.Errorf("%w: the path goes through the alias *%s", ErrUnsupported, cur.Value)
		}
		last := si == len(path)-1
		l.parent = cur
		switch s := step.(type) {
		case int:
			if cur.Kind != yaml.SequenceNode {
				return loc{}, cur, fmt.Errorf("%w: index %d into a %s", ErrKind, s, kindName(cur))
			}
			if last && o == opInsert {
				return loc{}, cur, fmt.Errorf("%w: Insert adds a mapping key, not an item", ErrKind)
			}
			if last && o == opSet && s == len(cur.Content) {
				l.i, l.node = s, nil // one past the end: an item to append
				return l, nil, nil
			}
			if s < 0 || s >= len(cur.Content) {
				return loc{}, cur, fmt.Errorf("%w: index %d of a sequence of %d", ErrNotFound, s, len(cur.Content))
			}
			l.i, cur = s, cur.Content[s]
		case string:
			if cur.Kind != yaml.MappingNode {
				return loc{}, cur, fmt.Errorf("%w: key %q in a %s", ErrKind, s, kindName(cur))
			}
			l.i = -1
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if k := cur.Content[i]; k.Kind == yaml.ScalarNode && k.Value == s {
					l.i = i
					break
				}
			}
			switch {
			case l.i < 0 && last && o != opDelete:
				l.node = nil
				return l, nil, nil
			case l.i < 0:
				return loc{}, cur, fmt.Errorf("%w: no key %q", ErrNotFound, s)
			case last && o == opInsert:
				k := cur.Content[l.i]
				return loc{}, k, fmt.Errorf("%w: %q", ErrExists, s)
			}
			cur = cur.Content[l.i+1]
		default:
			return loc{}, cur, fmt.Errorf("%w: a step of type %T (want int or string)", ErrKind, step)
		}
	}
	l.node = cur
	return l, nil, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// patch returns the byte range to replace and the text to put there, with
// "\n" line breaks.
func (d *doc) patch(l loc, path Path, o op, vn *yaml.Node) (start, end int, text string, err error) {
	defer func() {
		if errors.Is(err, errLost) {
			err = fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
	}()
	switch {
	case o == opDelete:
		return d.remove(l, path)
	case l.node == nil && l.parent.Kind == yaml.SequenceNode:
		return d.appendItem(l.parent, vn)
	case l.node == nil:
		return d.add(l.parent, path[len(path)-1].(string), o == opInsert, vn)
	}
	t := l.node
	prefer := yaml.Style(0)
	if t.Kind == yaml.ScalarNode {
		prefer = t.Style & quoteStyles
	}
	if isCollection(t) && t.Style&yaml.FlowStyle != 0 && isCollection(vn) {
		c := *vn // a flow collection stays flow
		c.Style |= yaml.FlowStyle
		vn = &c
	}
	switch {
	case l.parent == nil:
		return d.replaceRoot(t, vn, prefer)
	case l.parent.Style&yaml.FlowStyle != 0:
		return d.replaceInFlow(l, vn, prefer)
	case l.parent.Kind == yaml.MappingNode:
		return d.replaceValue(l, vn, prefer)
	}
	return d.replaceItem(l, vn, prefer)
}

func (d *doc) replaceRoot(t, vn *yaml.Node, prefer yaml.Style) (int, int, string, error) {
	st, a := d.start(t), anchor(t)
	te, err := d.end(t, -1)
	if err != nil {
		return 0, 0, "", err
	}
	indent := d.col(d.content(t))
	if !isBlock(vn) {
		indent += d.unit // a literal block's lines
	}
	text, err := d.render(vn, indent, false, prefer)
	if err != nil {
		return 0, 0, "", err
	}
	s, e, text := d.keepComment(st, te, withAnchor(a, text, isBlock(vn), indent))
	return s, e, text, nil
}

func (d *doc) replaceInFlow(l loc, vn *yaml.Node, prefer yaml.Style) (int, int, string, error) {
	t := l.node
	text, err := d.render(vn, 0, true, prefer)
	if err != nil {
		return 0, 0, "", err
	}
	text = withAnchor(anchor(t), text, false, 0)
	if l.parent.Kind == yaml.MappingNode {
		ke, err := d.end(l.parent.Content[l.i], -1)
		if err != nil {
			return 0, 0, "", err
		}
		colon := d.indicator(ke, ':')
		switch {
		case colon < 0: // {a, b}: a key with no value
			return ke, ke, ": " + text, nil
		case empty(t):
			return colon + 1, colon + 1, " " + text, nil
		}
	}
	te, err := d.end(t, -1)
	return d.start(t), te, text, err
}

// anchor returns the anchor that t's replacement keeps, so that the
// aliases naming it still resolve; tags are not kept, they belong to the
// old value's type.
func anchor(t *yaml.Node) string {
	if t.Anchor == "" {
		return ""
	}
	return "&" + t.Anchor
}

// withAnchor puts anchor a before text: on the same line before a scalar
// or flow text, on a line of its own before a block collection's lines.
func withAnchor(a, text string, block bool, indent int) string {
	switch {
	case a == "":
		return text
	case block:
		return a + "\n" + strings.Repeat(" ", indent) + text
	}
	return a + " " + text
}

// replaceValue replaces the value of a key in a block mapping.
func (d *doc) replaceValue(l loc, vn *yaml.Node, prefer yaml.Style) (int, int, string, error) {
	kIndent := d.indent(l.parent)
	ke, err := d.end(l.parent.Content[l.i], kIndent)
	if err != nil {
		return 0, 0, "", err
	}
	colon := d.indicator(ke, ':')
	if colon < 0 {
		return 0, 0, "", errLost
	}
	t, a := l.node, anchor(l.node)
	st, te, err := d.span(t, colon, kIndent)
	if err != nil {
		return 0, 0, "", err
	}
	sameLine := d.line(st) == d.line(colon)
	if !isBlock(vn) {
		text, err := d.render(vn, kIndent+d.unit, false, prefer)
		if err != nil {
			return 0, 0, "", err
		}
		text = withAnchor(a, text, false, 0)
		if !sameLine {
			// The old value started on a later line: the new one moves up
			// to the key, with the comment the key's line had.
			st, text = colon+1, withComment(" "+text, d.comment(colon+1))
		} else if st == colon+1 {
			text = " " + text
		}
		s, e, text := d.keepComment(st, te, text)
		return s, e, text, nil
	}
	indent := kIndent + d.unit
	switch {
	case isBlock(t) && t.Kind == vn.Kind:
		indent = d.col(d.content(t))
	case vn.Kind == yaml.SequenceNode && d.compact:
		indent = kIndent
	}
	body, err := d.render(vn, indent, false, 0)
	if err != nil {
		return 0, 0, "", err
	}
	body = withAnchor(a, body, true, indent)
	switch {
	case !sameLine:
		st, body = d.lineStart(st), strings.Repeat(" ", indent)+body
	case a != "": // the anchor stays on the key's line
	default:
		st, body = colon+1, "\n"+strings.Repeat(" ", indent)+body
	}
	s, e, text := d.keepComment(st, te, body)
	return s, e, text, nil
}

// replaceItem replaces an item of a block sequence.
func (d *doc) replaceItem(l loc, vn *yaml.Node, prefer yaml.Style) (int, int, string, error) {
	dIndent := d.indent(l.parent)
	dash, err := d.dash(l.parent, l.i, dIndent)
	if err != nil {
		return 0, 0, "", err
	}
	t, a := l.node, anchor(l.node)
	st, te, err := d.span(t, dash, dIndent)
	if err != nil {
		return 0, 0, "", err
	}
	sameLine := d.line(st) == d.line(dash)
	indent := dIndent + 2
	switch {
	case !sameLine:
		indent = d.col(d.content(t))
	case st > dash+1 && a == "":
		indent = d.col(st)
	}
	text, err := d.render(vn, indent, false, prefer)
	if err != nil {
		return 0, 0, "", err
	}
	text = withAnchor(a, text, isBlock(vn), indent)
	switch {
	case !sameLine && isBlock(vn):
		st, text = d.lineStart(st), strings.Repeat(" ", indent)+text
	case sameLine && st == dash+1:
		text = " " + text
	}
	s, e, text := d.keepComment(st, te, text)
	return s, e, text, nil
}

// span returns where the value t starts (with its anchor and tag) and
// ends; a value written as nothing lies just after its indicator at ind.
func (d *doc) span(t *yaml.Node, ind, indent int) (start, end int, err error) {
	if empty(t) {
		return ind + 1, ind + 1, nil
	}
	end, err = d.end(t, indent)
	return d.start(t), end, err
}

// dash returns the offset of the '-' that starts item i of block sequence
// seq.
func (d *doc) dash(seq *yaml.Node, i, indent int) (int, error) {
	from := d.content(seq)
	if i > 0 {
		var err error
		if from, err = d.end(seq.Content[i-1], indent); err != nil {
			return 0, err
		}
	}
	if at := d.indicator(from, '-'); at >= 0 {
		return at, nil
	}
	return 0, errLost
}

// keepComment extends a replacement of [s, e) that becomes several lines
// to the end of e's line, and moves the comment there to the end of the
// new text's first line: it stays beside the key, and neither it nor
// trailing blanks end up after the last line of a literal block, which
// would take them for content.
func (d *doc) keepComment(s, e int, text string) (int, int, string) {
	if !strings.Contains(text, "\n") {
		return s, e, text
	}
	le := d.lineEnd(e)
	if rest := bytes.TrimLeft(d.src[e:le], " \t"); len(rest) > 0 && rest[0] != '#' {
		return s, e, text
	}
	return s, le, withComment(text, d.comment(e))
}

func withComment(text, c string) string {
	if c == "" {
		return text
	}
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		return text[:i] + " " + c + text[i:]
	}
	return text + " " + c
}

// add inserts key k with value vn into mapping m, first or last.
func (d *doc) add(m *yaml.Node, k string, first bool, vn *yaml.Node) (int, int, string, error) {
	flow := m.Style&yaml.FlowStyle != 0
	kt, err := key(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, flow)
	if err != nil {
		return 0, 0, "", err
	}
	if flow {
		v, err := d.render(vn, 0, true, 0)
		if err != nil {
			return 0, 0, "", err
		}
		entry := kt + ": " + v
		switch {
		case len(m.Content) == 0:
			at := d.content(m) + 1
			return at, at, entry, nil
		case first:
			at := d.start(m.Content[0])
			return at, at, entry + ", ", nil
		}
		e, err := d.end(m.Content[len(m.Content)-1], -1)
		return e, e, ", " + entry, err
	}
	kIndent := d.indent(m)
	entry := kt + ":"
	if isBlock(vn) {
		indent := kIndent + d.unit
		if vn.Kind == yaml.SequenceNode && d.compact {
			indent = kIndent
		}
		body, err := d.render(vn, indent, false, 0)
		if err != nil {
			return 0, 0, "", err
		}
		entry += "\n" + strings.Repeat(" ", indent) + body
	} else {
		v, err := d.render(vn, kIndent+d.unit, false, 0)
		if err != nil {
			return 0, 0, "", err
		}
		entry += " " + v
	}
	if first {
		at := d.start(m.Content[0])
		return at, at, entry + "\n" + strings.Repeat(" ", kIndent), nil
	}
	e, err := d.end(m.Content[len(m.Content)-1], kIndent)
	if err != nil {
		return 0, 0, "", err
	}
	at := d.lineEnd(e)
	return at, at, "\n" + strings.Repeat(" ", kIndent) + entry, nil
}

// appendItem adds vn as the last item of sequence seq.
func (d *doc) appendItem(seq, vn *yaml.Node) (int, int, string, error) {
	if seq.Style&yaml.FlowStyle != 0 {
		v, err := d.render(vn, 0, true, 0)
		if err != nil {
			return 0, 0, "", err
		}
		if len(seq.Content) == 0 {
			at := d.content(seq) + 1
			return at, at, v, nil
		}
		e, err := d.end(seq.Content[len(seq.Content)-1], -1)
		return e, e, ", " + v, err
	}
	indent := d.indent(seq)
	v, err := d.render(vn, indent+2, false, 0)
	if err != nil {
		return 0, 0, "", err
	}
	e, err := d.end(seq.Content[len(seq.Content)-1], indent)
	if err != nil {
		return 0, 0, "", err
	}
	at := d.lineEnd(e)
	return at, at, "\n" + strings.Repeat(" ", indent) + "- " + v, nil
}

// remove deletes the key or item at l with the lines it alone occupies.
func (d *doc) remove(l loc, path Path) (int, int, string, error) {
	p := l.parent
	step := 1
	if p.Kind == yaml.MappingNode {
		step = 2
	}
	if len(p.Content) == step { // the last entry: the collection becomes empty
		pl, _, err := d.resolve(path[:len(path)-1], opSet)
		if err != nil {
			return 0, 0, "", err
		}
		return d.patch(pl, path, opSet, &yaml.Node{Kind: p.Kind, Style: yaml.FlowStyle})
	}
	first, last := p.Content[l.i], p.Content[l.i+step-1]
	if p.Style&yaml.FlowStyle != 0 {
		if l.i+step < len(p.Content) {
			return d.start(first), d.start(p.Content[l.i+step]), "", nil
		}
		pe, err := d.end(p.Content[l.i-1], -1)
		if err != nil {
			return 0, 0, "", err
		}
		e, err := d.end(last, -1)
		return pe, e, "", err
	}
	indent := d.indent(p)
	s := d.start(first)
	if q := bytes.TrimRight(d.src[d.lineStart(s):s], " \t"); bytes.HasSuffix(q, []byte("?")) {
		s = d.lineStart(s) + len(q) - 1 // "? key": the indicator goes too
	}
	if p.Kind == yaml.SequenceNode {
		var err error
		if s, err = d.dash(p, l.i, indent); err != nil {
			return 0, 0, "", err
		}
	}
	e := s + 1
	if !empty(last) {
		var err error
		if e, err = d.end(last, indent); err != nil {
			return 0, 0, "", err
		}
	}
	if d.firstOnLine(s) {
		return d.lineStart(s), d.nextLine(e), "", nil
	}
	// The first entry after a "- ": the next one moves up in its place.
	next := d.start(p.Content[l.i+step])
	if p.Kind == yaml.SequenceNode {
		next = d.indicator(e, '-')
	}
	if next < 0 {
		return 0, 0, "", errLost
	}
	return s, next, "", nil
}

// verify checks that out parses and means the input with the one change,
// and returns it parsed.
func (d *doc) verify(out []byte, path Path, o op, vn *yaml.Node) (*doc, error) {
	var before, want, after any
	if d.root != nil {
		if err := d.root.Decode(&before); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
		}
	}
	if vn != nil {
		if err := vn.Decode(&want); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
	}
	expect, ok := apply(before, path, o, want)
	if !ok {
		return nil, fmt.Errorf("%w: the decoded document does not follow the path", ErrUnsupported)
	}
	next, err := parse(out)
	if err == nil && next.root != nil {
		err = next.root.Decode(&after)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the edited text would not parse: %v", ErrUnsupported, err)
	}
	if !reflect.DeepEqual(expect, after) {
		return nil, fmt.Errorf("%w: the edit would change more than the value at the path (an anchor or alias, or a style the package cannot keep)", ErrUnsupported)
	}
	return next, nil
}

// apply makes the edit on a decoded document.
func apply(t any, path Path, o op, v any) (any, bool) {
	if len(path) == 0 {
		return v, true
	}
	last := len(path) == 1
	switch s := path[0].(type) {
	case int:
		seq, ok := t.([]any)
		switch {
		case !ok || s > len(seq):
			return nil, false
		case last && o == opDelete:
			return append(seq[:s:s], seq[s+1:]...), true
		case s == len(seq):
			return append(seq, v), last
		}
		seq[s], ok = apply(seq[s], path[1:], o, v)
		return seq, ok
	case string:
		var ok bool
		switch m := t.(type) {
		case map[string]any:
			if last && o == opDelete {
				delete(m, s)
				return m, true
			}
			m[s], ok = apply(m[s], path[1:], o, v)
			return m, ok
		case map[any]any:
			k := any(s)
			for mk := range m {
				if fmt.Sprint(mk) == s {
					k = mk
				}
			}
			if last && o == opDelete {
				delete(m, k)
				return m, true
			}
			m[k], ok = apply(m[k], path[1:], o, v)
			return m, ok
		}
	}
	return nil, false
}
