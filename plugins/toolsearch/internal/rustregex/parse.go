package rustregex

import (
	"strconv"
	"unicode"
)

type nodeOp uint8

const (
	opEmpty  nodeOp = iota // matches the empty string; also the trace of a (?flags) group
	opLit                  // one code point, folded when fold is set
	opClass                // a set of code points
	opConcat               // subs in sequence
	opAlt                  // one of subs
	opRepeat               // sub, min to max times (max < 0: unbounded)
	opAssert               // a zero-width assertion
)

// assertion kinds. Text anchors (\A, \z) are line anchors here: the matcher
// only ever answers for one line (S-037).
type assertKind uint8

const (
	aLineStart assertKind = iota // ^ \A
	aLineEnd                     // $ \z
	aWord                        // \b
	aNotWord                     // \B
	aWordStart                   // \< \b{start}
	aWordEnd                     // \> \b{end}
	aStartHalf                   // \b{start-half}
	aEndHalf                     // \b{end-half}
)

// node is the parsed pattern. Classes are already computed sets, with case
// folding and negation applied as Rust applies them.
type node struct {
	op       nodeOp
	r        rune
	fold     bool // opLit: match r's simple case fold orbit
	set      runeSet
	subs     []*node
	sub      *node
	min, max int
	kind     assertKind
	flags    bool // opEmpty: it was a (?flags) group, which cannot be repeated
	pos, end int  // span in the wrapped pattern
}

type flagSet struct{ i, x bool }

// parser reads Rust regex syntax (regex-syntax 0.8, as in rg 14.1.1) over
// "(?:" + pattern + ")", the text rg parses, so error spans line up with
// the text rg shows.
type parser struct {
	src   []rune
	pos   int
	flags flagSet
	depth int
	names map[string]bool

	// later is the first error that rg would only meet after parsing the
	// whole pattern (an unknown property, while translating it) or that is
	// this layer's own refusal: any parse error further on comes first.
	later *SyntaxError
}

func (p *parser) deferError(err *SyntaxError) {
	if p.later == nil {
		p.later = err
	}
}

const nestLimit = 250

func parse(pattern string) (*node, *SyntaxError) {
	p := &parser{src: []rune("(?:" + pattern + ")"), names: map[string]bool{}}
	n, err := p.parseTop()
	if err != nil {
		err.Pattern = pattern
		return nil, err
	}
	return n, nil
}

func (p *parser) fail(start, end int, reason string) *SyntaxError {
	if end <= start {
		end = start + 1
	}
	return &SyntaxError{Reason: reason, start: start, end: end}
}

func (p *parser) eof() bool  { return p.pos >= len(p.src) }
func (p *parser) char() rune { return p.src[p.pos] }

func (p *parser) peekIs(s string) bool {
	i := p.pos
	for _, r := range s {
		if i >= len(p.src) || p.src[i] != r {
			return false
		}
		i++
	}
	return true
}

func (p *parser) bumpIf(s string) bool {
	if p.peekIs(s) {
		p.pos += len([]rune(s))
		return true
	}
	return false
}

// bump advances one code point and reports whether any remain.
func (p *parser) bump() bool {
	if !p.eof() {
		p.pos++
	}
	return !p.eof()
}

// bumpSpace skips whitespace and # comments in verbose mode.
func (p *parser) bumpSpace() {
	if !p.flags.x {
		return
	}
	for !p.eof() {
		switch c := p.char(); {
		case unicode.IsSpace(c):
			p.pos++
		case c == '#':
			for !p.eof() && p.char() != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *parser) bumpAndBumpSpace() bool {
	p.bump()
	p.bumpSpace()
	return !p.eof()
}

// peekSpace is the next code point after the current one, skipping verbose
// whitespace; -1 at the end.
func (p *parser) peekSpace() rune {
	save := p.pos
	defer func() { p.pos = save }()
	if !p.bump() {
		return -1
	}
	p.bumpSpace()
	if p.eof() {
		return -1
	}
	return p.char()
}

func (p *parser) parseTop() (*node, *SyntaxError) {
	n, err := p.parseAlt()
	if err != nil {
		return nil, err
	}
	if !p.eof() { // a ')' with no group open
		return nil, p.fail(p.pos, p.pos+1, reasonGroupUnopened)
	}
	if p.later != nil {
		return nil, p.later
	}
	return n, nil
}

// parseAlt reads branches up to a ')' or the end, leaving either unread.
func (p *parser) parseAlt() (*node, *SyntaxError) {
	var branches []*node
	for {
		c, err := p.parseConcat()
		if err != nil {
			return nil, err
		}
		branches = append(branches, c)
		if p.eof() || p.char() != '|' {
			break
		}
		p.bump()
	}
	if len(branches) == 1 {
		return branches[0], nil
	}
	if s, ok := charAlternation(branches); ok {
		return &node{op: opClass, set: s}, nil
	}
	return &node{op: opAlt, subs: branches}, nil
}

// charAlternation is the class Rust makes of an alternation whose branches
// are all single characters, or all classes (regex-syntax's Hir::alternation):
// rg's newline rule then sees a class, so x|\n is x, while (?i)a|\n, a class
// and a literal, is refused. A one-member class counts as its character and a
// case-folded literal as a class, as in Rust's translation.
func charAlternation(branches []*node) (runeSet, bool) {
	var u runeSet
	chars, classes := 0, 0
	for _, b := range branches {
		switch {
		case b.op == opLit && !b.fold:
			chars++
			u = u.union(runeSet{b.r, b.r})
		case b.op == opLit:
			classes++
			u = u.union(foldOrbit(b.r))
		case b.op == opClass && len(b.set) == 2 && b.set[0] == b.set[1]:
			chars++
			u = u.union(b.set)
		case b.op == opClass:
			classes++
			u = u.union(b.set)
		default:
			return nil, false
		}
	}
	return u, chars == len(branches) || classes == len(branches)
}

func (p *parser) parseConcat() (*node, *SyntaxError) {
	var items []*node
loop:
	for {
		p.bumpSpace()
		if p.eof() {
			break
		}
		start := p.pos
		var n *node
		var err *SyntaxError
		switch c := p.char(); c {
		case '|', ')':
			break loop
		case '(':
			n, err = p.parseGroup()
		case '[':
			var s runeSet
			s, err = p.parseBracket()
			n = &node{op: opClass, set: s}
		case '*', '+', '?', '{':
			if len(items) == 0 || items[len(items)-1].flags {
				return nil, p.fail(start, start+1, reasonRepeatMissing)
			}
			last := items[len(items)-1]
			n, err = p.parseRepeat(last)
			items = items[:len(items)-1]
		case '.':
			p.bump()
			n = &node{op: opClass, set: runeSet{0, unicode.MaxRune}}
		case '^':
			p.bump()
			n = &node{op: opAssert, kind: aLineStart}
		case '$':
			p.bump()
			n = &node{op: opAssert, kind: aLineEnd}
		case '\\':
			var prim primitive
			prim, err = p.parseEscape()
			n = prim.node(p.flags)
		default:
			p.bump()
			n = literal(c, p.flags)
		}
		if err != nil {
			return nil, err
		}
		if n.pos == 0 && n.end == 0 {
			n.pos, n.end = start, p.pos
		}
		items = append(items, n)
	}
	if len(items) == 1 && !items[0].flags {
		return items[0], nil // (?:x) is x
	}
	return &node{op: opConcat, subs: items}, nil
}

func literal(r rune, f flagSet) *node {
	n := &node{op: opLit, r: r}
	if f.i && unicode.SimpleFold(r) != r {
		n.fold = true
	}
	return n
}

func (p *parser) enter(start int) *SyntaxError {
	p.depth++
	if p.depth > nestLimit {
		return p.fail(start, start+1, reasonNestLimit)
	}
	return nil
}

func (p *parser) parseGroup() (*node, *SyntaxError) {
	open := p.pos
	if err := p.enter(open); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.bump()
	p.bumpSpace()
	for _, look := range []string{"?=", "?!", "?<=", "?<!"} {
		if p.bumpIf(look) {
			return nil, p.fail(open, p.pos, reasonLookAround)
		}
	}
	inner := p.pos
	saved := p.flags
	switch {
	case p.bumpIf("?P<") || p.bumpIf("?<"):
		if err := p.parseCaptureName(); err != nil {
			return nil, err
		}
	case p.bumpIf("?"):
		if p.eof() {
			return nil, p.fail(open, open+1, reasonGroupUnclosed)
		}
		f, any, err := p.parseFlags()
		if err != nil {
			return nil, err
		}
		end := p.char()
		p.bump()
		if end == ')' {
			if !any {
				return nil, p.fail(inner, p.pos, reasonRepeatMissing)
			}
			p.flags = f // a bare (?flags) holds to the end of the enclosing group
			return &node{op: opEmpty, flags: true}, nil
		}
		p.flags = f
	}
	n, err := p.parseAlt()
	if err != nil {
		return nil, err
	}
	if p.eof() {
		return nil, p.fail(open, open+1, reasonGroupUnclosed)
	}
	p.bump() // ')'
	p.flags = saved
	return n, nil
}

func isCaptureChar(r rune, first bool) bool {
	if first {
		return r == '_' || unicode.IsLetter(r)
	}
	return r == '_' || r == '.' || r == '[' || r == ']' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func (p *parser) parseCaptureName() *SyntaxError {
	if p.eof() {
		return p.fail(p.pos, p.pos, reasonGroupNameEOF)
	}
	start := p.pos
	for p.char() != '>' {
		if !isCaptureChar(p.char(), p.pos == start) {
			return p.fail(p.pos, p.pos+1, reasonGroupNameInvalid)
		}
		if !p.bump() {
			break
		}
	}
	if p.eof() {
		return p.fail(p.pos, p.pos, reasonGroupNameEOF)
	}
	name := string(p.src[start:p.pos])
	p.bump()
	if name == "" {
		return p.fail(start, start, reasonGroupNameEmpty)
	}
	if p.names[name] {
		return p.fail(start, start+len([]rune(name)), reasonGroupNameDup)
	}
	p.names[name] = true
	return nil
}

// parseFlags reads flags up to ':' or ')' and returns the flag state they
// give. Flags Go's regexp cannot honour are refused.
func (p *parser) parseFlags() (flagSet, bool, *SyntaxError) {
	f := p.flags
	seen := map[rune]bool{}
	negated, negAt, any := false, -1, false
	for p.char() != ':' && p.char() != ')' {
		c := p.char()
		switch {
		case c == '-':
			if negated {
				return f, any, p.fail(p.pos, p.pos+1, reasonFlagRepeatedNeg)
			}
			negated, negAt = true, p.pos
		case c == 'i' || c == 'm' || c == 's' || c == 'U' || c == 'u' || c == 'x' || c == 'R':
			if seen[c] {
				return f, any, p.fail(p.pos, p.pos+1, reasonFlagDuplicate)
			}
			seen[c], negAt, any = true, -1, true
			switch c {
			case 'i':
				f.i = !negated
			case 'x':
				f.x = !negated
			case 'u':
				if negated {
					p.deferError(p.fail(p.pos, p.pos+1, reasonNoUnicode))
				}
			case 'R':
				if !negated {
					p.deferError(p.fail(p.pos, p.pos+1, reasonCRLF))
				}
			} // m: anchors are always line anchors; s: '\n' is never matched; U: greed does not change whether a line matches
		default:
			return f, any, p.fail(p.pos, p.pos+1, reasonFlagUnknown)
		}
		if !p.bump() {
			return f, any, p.fail(p.pos, p.pos, reasonFlagEOF)
		}
	}
	if negAt >= 0 {
		return f, any, p.fail(negAt, negAt+1, reasonFlagDangling)
	}
	return f, any, nil
}

// parseDecimal reads a count, with whitespace around it as Rust allows.
func (p *parser) parseDecimal(emptyReason string) (int, *SyntaxError) {
	for !p.eof() && unicode.IsSpace(p.char()) {
		p.bump()
	}
	start := p.pos
	var digits []rune
	for !p.eof() && p.char() >= '0' && p.char() <= '9' {
		digits = append(digits, p.char())
		p.bumpAndBumpSpace()
	}
	end := p.pos
	for !p.eof() && unicode.IsSpace(p.char()) {
		p.bumpAndBumpSpace()
	}
	if len(digits) == 0 {
		return 0, p.fail(start, end, emptyReason)
	}
	n, err := strconv.ParseUint(string(digits), 10, 32)
	if err != nil {
		return 0, p.fail(start, end, reasonDecimalInvalid)
	}
	return int(n), nil
}

func (p *parser) parseRepeat(sub *node) (*node, *SyntaxError) {
	start := p.pos
	n := &node{op: opRepeat, sub: sub, pos: sub.pos}
	switch p.char() {
	case '*':
		n.min, n.max = 0, -1
	case '+':
		n.min, n.max = 1, -1
	case '?':
		n.min, n.max = 0, 1
	case '{':
		if !p.bumpAndBumpSpace() {
			return nil, p.fail(start, p.pos, reasonRepeatUnclosed)
		}
		lo, err := p.parseDecimal(reasonRepeatDecimal)
		if err != nil {
			return nil, err
		}
		n.min, n.max = lo, lo
		if p.eof() {
			return nil, p.fail(start, p.pos, reasonRepeatUnclosed)
		}
		if p.char() == ',' {
			if !p.bumpAndBumpSpace() {
				return nil, p.fail(start, p.pos, reasonRepeatUnclosed)
			}
			n.max = -1
			if p.char() != '}' {
				if n.max, err = p.parseDecimal(reasonRepeatDecimal); err != nil {
					return nil, err
				}
			}
		}
		if p.eof() || p.char() != '}' {
			return nil, p.fail(start, p.pos, reasonRepeatUnclosed)
		}
	}
	p.bumpAndBumpSpace()
	if !p.eof() && p.char() == '?' { // lazy: the same lines match
		p.bump()
	}
	n.end = p.pos
	if n.max >= 0 && n.min > n.max {
		return nil, p.fail(start, p.pos, reasonRepeatInvalid)
	}
	if n.min > 1000 || n.max > 1000 {
		p.deferError(p.fail(start, p.pos, reasonRepeatTooBig))
	}
	return n, nil
}
