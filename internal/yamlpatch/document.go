package yamlpatch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v4"
)

// doc is a parsed document with what the package needs to turn a node's
// line and column into bytes and to find where the node ends.
type doc struct {
	src   []byte
	lines []int      // lines[i] is the offset where line i+1 starts
	root  *yaml.Node // the first document's content; nil when it has none
	nl    string     // the line break new lines get: the file's first, if CR or CRLF
	unit  int        // the step by which nested block mappings are indented
	// compact is set when block sequences under a key start at the key's
	// column ("key:\n- a") rather than one step in.
	compact bool
}

func parse(src []byte) (*doc, error) {
	// The parser counts columns in characters of UTF-8 text; another
	// encoding would be transcoded first and its offsets lost.
	if !utf8.Valid(src) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrSyntax)
	}
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(src)).Decode(&n); err != nil && !errors.Is(err, io.EOF) {
		var perr *yaml.ParserError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("%w: line %d: %s", ErrSyntax, SyntaxLine(perr, src), perr.Message)
		}
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	d := &doc{src: src, nl: "\n", unit: 2}
	start := 0
	if bytes.HasPrefix(src, []byte("\uFEFF")) {
		start = 3 // the reader drops a byte order mark before counting
	}
	d.lines = append(d.lines, start)
	nlSeen := false
	for i := start; i < len(src); {
		if w := d.brk(i); w > 0 {
			if !nlSeen && src[i] == '\r' {
				d.nl = string(src[i : i+w]) // CRLF, or a lone CR as old Mac files have
			}
			nlSeen = true
			i += w
			d.lines = append(d.lines, i)
			continue
		}
		i++
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		d.root = n.Content[0]
		d.style(d.root)
	}
	return d, nil
}

// style learns the indentation step and the sequence placement from the
// first block mapping whose value is a block collection.
func (d *doc) style(n *yaml.Node) {
	unitSet, compactSet := false, false
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.Style&yaml.FlowStyle != 0 || v.Line == k.Line {
					continue
				}
				switch {
				case v.Kind == yaml.MappingNode && !unitSet && v.Column > k.Column:
					d.unit, unitSet = v.Column-k.Column, true
				case v.Kind == yaml.SequenceNode && !compactSet:
					d.compact, compactSet = v.Column == k.Column, true
				}
			}
		}
		for _, c := range n.Content {
			if unitSet && compactSet {
				return
			}
			walk(c)
		}
	}
	walk(n)
}

// brk returns the length of the line break at i, 0 when there is none.
// The breaks are the parser's: CRLF, CR, LF, NEL, LS and PS.
func (d *doc) brk(i int) int {
	s := d.src
	switch {
	case i >= len(s):
		return 0
	case s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n':
		return 2
	case s[i] == '\r' || s[i] == '\n':
		return 1
	case s[i] == 0xC2 && i+1 < len(s) && s[i+1] == 0x85:
		return 2
	case s[i] == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
		return 3
	}
	return 0
}

// offset turns a node's 1-based line and column (in characters) into a
// byte offset.
func (d *doc) offset(line, col int) int {
	if line < 1 || line > len(d.lines) {
		return len(d.src)
	}
	i := d.lines[line-1]
	for c := 1; c < col && i < len(d.src); c++ {
		_, w := utf8.DecodeRune(d.src[i:])
		i += w
	}
	return i
}

func (d *doc) line(pos int) int { return sort.SearchInts(d.lines, pos+1) - 1 }

func (d *doc) lineStart(pos int) int { return d.lines[d.line(pos)] }

// lineEnd returns the offset of the break that ends pos's line, or the
// end of the input.
func (d *doc) lineEnd(pos int) int {
	for pos < len(d.src) && d.brk(pos) == 0 {
		pos++
	}
	return pos
}

// nextLine returns the start of the line after pos's.
func (d *doc) nextLine(pos int) int {
	e := d.lineEnd(pos)
	return e + d.brk(e)
}

// col is pos's column in characters, 0-based.
func (d *doc) col(pos int) int { return utf8.RuneCount(d.src[d.lineStart(pos):pos]) }

// firstOnLine reports whether only blanks precede pos on its line.
func (d *doc) firstOnLine(pos int) bool {
	return len(bytes.Trim(d.src[d.lineStart(pos):pos], " \t")) == 0
}

// comment returns the comment that follows pos on its line after blanks,
// "" when the rest of the line holds none.
func (d *doc) comment(pos int) string {
	rest := strings.TrimLeft(string(d.src[pos:d.lineEnd(pos)]), " \t")
	if !strings.HasPrefix(rest, "#") {
		return ""
	}
	return strings.TrimRight(rest, " \t")
}

// skipGap skips blanks, line breaks and comments: what lies between two
// tokens.
func (d *doc) skipGap(i int) int {
	for i < len(d.src) {
		switch c := d.src[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '#':
			i = d.lineEnd(i)
		case d.brk(i) > 0:
			i += d.brk(i)
		default:
			return i
		}
	}
	return i
}

// indicator returns the offset of the indicator c (':' after a key, '-'
// before an item) in the gap starting at i, -1 when the gap has none.
func (d *doc) indicator(i int, c byte) int {
	i = d.skipGap(i)
	if i < len(d.src) && d.src[i] == c {
		return i
	}
	return -1
}

func (d *doc) start(n *yaml.Node) int { return d.offset(n.Line, n.Column) }

// content returns where n's content begins, after its anchor and tag.
func (d *doc) content(n *yaml.Node) int {
	i := d.start(n)
	for i < len(d.src) && (d.src[i] == '&' || d.src[i] == '!') {
		for i < len(d.src) && !isBlank(d.src[i]) && d.brk(i) == 0 && !strings.ContainsRune(",[]{}", rune(d.src[i])) {
			i++
		}
		i = d.skipGap(i)
	}
	return i
}

// empty reports whether n is a null written as nothing at all (a key with
// no value), whose range is empty.
func empty(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "" && n.Style&^yaml.TaggedStyle == 0 && n.Tag == "!!null" && n.Anchor == ""
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

var errLost = errors.New("cannot find where a node ends")

// end returns the offset just past n's last character. indent is the
// indentation of the block collection that holds n (-1 at the top), which a
// block scalar's extent depends on.
func (d *doc) end(n *yaml.Node, indent int) (int, error) {
	cs := d.content(n)
	switch n.Kind {
	case yaml.AliasNode:
		return cs + 1 + len(n.Value), nil
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle != 0 {
			return d.flowEnd(n, cs)
		}
		if len(n.Content) == 0 {
			return 0, errLost
		}
		return d.end(n.Content[len(n.Content)-1], d.indent(n))
	case yaml.ScalarNode:
		switch {
		case empty(n):
			return d.start(n), nil
		case n.Style&yaml.DoubleQuotedStyle != 0:
			return d.quotedEnd(cs, '"')
		case n.Style&yaml.SingleQuotedStyle != 0:
			return d.quotedEnd(cs, '\'')
		case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			return d.blockScalarEnd(cs, indent), nil
		default:
			return d.plainEnd(cs, n.Value)
		}
	}
	return 0, errLost
}

// indent is the column of a block collection's keys or dashes.
func (d *doc) indent(n *yaml.Node) int {
	if n.Kind == yaml.MappingNode {
		return d.col(d.start(n.Content[0]))
	}
	return d.col(d.content(n))
}

func (d *doc) quotedEnd(cs int, q byte) (int, error) {
	s := d.src
	for i := cs + 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i + 1, nil
		}
	}
	return 0, errLost
}

// plainEnd walks the source of a plain scalar along its value: the two
// agree character by character except where lines fold, a run of blanks
// and breaks in the source being a run of spaces or newlines in the value.
func (d *doc) plainEnd(cs int, v string) (int, error) {
	s := d.src
	i, j := cs, 0
	for j < len(v) {
		if i >= len(s) {
			return 0, errLost
		}
		if isBlank(s[i]) || d.brk(i) > 0 {
			k := i
			for k < len(s) && isBlank(s[k]) {
				k++
			}
			if k < len(s) && d.brk(k) == 0 { // blanks inside a line are kept as written
				for ; i < k; i, j = i+1, j+1 {
					if j >= len(v) || s[i] != v[j] {
						return 0, errLost
					}
				}
				continue
			}
			for k < len(s) && (isBlank(s[k]) || d.brk(k) > 0) {
				k += max(1, d.brk(k))
			}
			m := j
			for m < len(v) && (v[m] == ' ' || v[m] == '\n') {
				m++
			}
			if m == j {
				return 0, errLost
			}
			i, j = k, m
			continue
		}
		if s[i] != v[j] {
			return 0, errLost
		}
		i, j = i+1, j+1
	}
	return i, nil
}

// blockScalarEnd returns the end of the last line of the literal or folded
// scalar whose header is at cs: its last non-empty line, or its last empty
// one when it keeps trailing line breaks (|+).
func (d *doc) blockScalarEnd(cs, parent int) int {
	s := d.src
	i := cs + 1
	want, keep := 0, false
	for i < len(s) && (s[i] == '+' || s[i] == '-' || s[i] >= '1' && s[i] <= '9') {
		switch s[i] {
		case '+':
			keep = true
		case '-':
		default:
			want = max(parent, 0) + int(s[i]-'0')
		}
		i++
	}
	end := i
	for pos := d.nextLine(i); pos < len(s); {
		k := pos
		for k < len(s) && s[k] == ' ' {
			k++
		}
		le := d.lineEnd(k)
		if k == le { // an empty line is the scalar's when content follows or it keeps them
			if keep {
				end = le
			}
			if le == len(s) {
				break
			}
			pos = le + d.brk(le)
			continue
		}
		c := k - pos
		if want == 0 {
			if c <= parent || c < 1 {
				break
			}
			want = c
		}
		if c < want {
			break
		}
		end = le
		if le == len(s) {
			break
		}
		pos = le + d.brk(le)
	}
	return end
}

func (d *doc) flowEnd(n *yaml.Node, cs int) (int, error) {
	i := cs + 1
	if len(n.Content) > 0 {
		e, err := d.end(n.Content[len(n.Content)-1], -1)
		if err != nil {
			return 0, err
		}
		i = e
	}
	closer := byte(']')
	if n.Kind == yaml.MappingNode {
		closer = '}'
	}
	for {
		i = d.skipGap(i)
		switch {
		case i >= len(d.src):
			return 0, errLost
		case d.src[i] == ',':
			i++
		case d.src[i] == closer:
			return i + 1, nil
		default:
			return 0, errLost
		}
	}
}
