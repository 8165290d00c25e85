package rustregex

import (
	"strconv"
	"unicode"
)

type primKind uint8

const (
	primLit primKind = iota
	primClass
	primAssert
)

// primitive is one escape or class item: a literal, a set, or an assertion.
type primitive struct {
	kind       primKind
	r          rune
	set        runeSet
	assert     assertKind
	start, end int
}

func (pr primitive) node(f flagSet) *node {
	var n *node
	switch pr.kind {
	case primLit:
		n = literal(pr.r, f)
	case primClass:
		n = &node{op: opClass, set: pr.set}
	default:
		n = &node{op: opAssert, kind: pr.assert}
	}
	n.pos, n.end = pr.start, pr.end
	return n
}

func isMeta(c rune) bool {
	switch c {
	case '\\', '.', '+', '*', '?', '(', ')', '|', '[', ']', '{', '}', '^', '$', '#', '&', '-', '~':
		return true
	}
	return false
}

// isEscapeable: Rust lets any ASCII character that is not a letter, a digit,
// '<' or '>' be escaped to itself.
func isEscapeable(c rune) bool {
	if isMeta(c) {
		return true
	}
	if c >= 0x80 || c == '<' || c == '>' {
		return false
	}
	return !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}

func (p *parser) parseEscape() (primitive, *SyntaxError) {
	start := p.pos
	if !p.bump() {
		return primitive{}, p.fail(start, p.pos, reasonEscapeEOF)
	}
	c := p.char()
	switch {
	case c >= '0' && c <= '9':
		return primitive{}, p.fail(start, p.pos+1, reasonBackreference)
	case c == 'x' || c == 'u' || c == 'U':
		r, err := p.parseHex(start)
		return primitive{kind: primLit, r: r, start: start, end: p.pos}, err
	case c == 'p' || c == 'P':
		s, err := p.parseUnicodeClass()
		return primitive{kind: primClass, set: s, start: start, end: p.pos}, err
	case c == 'd' || c == 's' || c == 'w' || c == 'D' || c == 'S' || c == 'W':
		p.bump()
		t := loadTables()
		s := map[rune]runeSet{'d': t.digit, 's': t.space, 'w': t.word}[unicode.ToLower(c)]
		if unicode.IsUpper(c) {
			s = s.negate()
		}
		return primitive{kind: primClass, set: s, start: start, end: p.pos}, nil
	}
	p.bump()
	pr := primitive{kind: primLit, r: c, start: start, end: p.pos}
	if isEscapeable(c) {
		return pr, nil
	}
	special := map[rune]rune{'a': 7, 'f': '\f', 't': '\t', 'n': '\n', 'r': '\r', 'v': '\v'}
	if r, ok := special[c]; ok {
		pr.r = r
		return pr, nil
	}
	pr.kind = primAssert
	switch c {
	case 'A':
		pr.assert = aLineStart
	case 'z':
		pr.assert = aLineEnd
	case 'B':
		pr.assert = aNotWord
	case '<':
		pr.assert = aWordStart
	case '>':
		pr.assert = aWordEnd
	case 'b':
		pr.assert = aWord
		if !p.eof() && p.char() == '{' {
			k, ok, err := p.parseSpecialWordBoundary()
			if err != nil {
				return pr, err
			}
			if ok {
				pr.assert = k
			}
		}
	default:
		return pr, p.fail(start, p.pos, reasonEscapeUnknown)
	}
	pr.end = p.pos
	return pr, nil
}

// parseSpecialWordBoundary reads \b{start} and its kin. ok is false when
// the brace opens a counted repetition of \b instead.
func (p *parser) parseSpecialWordBoundary() (assertKind, bool, *SyntaxError) {
	valid := func(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' }
	brace := p.pos
	if !p.bumpAndBumpSpace() {
		return 0, false, p.fail(brace, p.pos, reasonWordBoundaryEOF)
	}
	if !valid(p.char()) {
		p.pos = brace
		return 0, false, nil
	}
	var name []rune
	for !p.eof() && valid(p.char()) {
		name = append(name, p.char())
		p.bumpAndBumpSpace()
	}
	if p.eof() || p.char() != '}' {
		return 0, false, p.fail(brace, p.pos, reasonWordBoundaryChar)
	}
	p.bump()
	switch string(name) {
	case "start":
		return aWordStart, true, nil
	case "end":
		return aWordEnd, true, nil
	case "start-half":
		return aStartHalf, true, nil
	case "end-half":
		return aEndHalf, true, nil
	}
	return 0, false, p.fail(brace, p.pos, reasonWordBoundaryName)
}

func isHex(c rune) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (p *parser) parseHex(start int) (rune, *SyntaxError) {
	width := map[rune]int{'x': 2, 'u': 4, 'U': 8}[p.char()]
	if !p.bumpAndBumpSpace() {
		return 0, p.fail(start, p.pos, reasonEscapeEOF)
	}
	var digits []rune
	var dstart, dend int
	if p.char() == '{' {
		brace := p.pos
		dstart = p.pos + 1
		for p.bumpAndBumpSpace() && p.char() != '}' {
			if !isHex(p.char()) {
				return 0, p.fail(p.pos, p.pos+1, reasonHexDigit)
			}
			digits = append(digits, p.char())
		}
		if p.eof() {
			return 0, p.fail(brace, p.pos, reasonEscapeEOF)
		}
		dend = p.pos
		p.bump()
		if len(digits) == 0 {
			return 0, p.fail(brace, p.pos, reasonHexEmpty)
		}
	} else {
		dstart = p.pos
		for i := 0; i < width; i++ {
			if i > 0 && !p.bumpAndBumpSpace() {
				return 0, p.fail(start, p.pos, reasonEscapeEOF)
			}
			if !isHex(p.char()) {
				return 0, p.fail(p.pos, p.pos+1, reasonHexDigit)
			}
			digits = append(digits, p.char())
		}
		p.bumpAndBumpSpace()
		dend = p.pos
	}
	v, err := strconv.ParseUint(string(digits), 16, 32)
	if err != nil || v > unicode.MaxRune || v >= 0xD800 && v <= 0xDFFF {
		return 0, p.fail(dstart, dend, reasonHexInvalid)
	}
	return rune(v), nil
}

func (p *parser) parseUnicodeClass() (runeSet, *SyntaxError) {
	negated := p.char() == 'P'
	if !p.bumpAndBumpSpace() {
		return nil, p.fail(p.pos-1, p.pos, reasonEscapeEOF)
	}
	start := p.pos
	var name []rune
	if p.char() == '{' {
		for p.bumpAndBumpSpace() && p.char() != '}' {
			name = append(name, p.char())
		}
		if p.eof() {
			return nil, p.fail(start, p.pos, reasonEscapeEOF)
		}
		p.bump()
	} else {
		if p.char() == '\\' {
			return nil, p.fail(p.pos, p.pos+1, reasonUnicodeClass)
		}
		name = []rune{p.char()}
		p.bumpAndBumpSpace()
	}
	s, reason := property(string(name))
	if reason != "" {
		p.deferError(p.fail(start-2, p.pos, reason))
	}
	if p.flags.i {
		s = s.fold()
	}
	if negated {
		s = s.negate()
	}
	return s, nil
}

// asciiClasses are the POSIX classes [[:name:]]; they stay ASCII.
var asciiClasses = map[string]runeSet{
	"alnum": set('0', '9', 'A', 'Z', 'a', 'z'), "alpha": set('A', 'Z', 'a', 'z'), "ascii": set(0, 0x7F),
	"blank": set('\t', '\t', ' ', ' '), "cntrl": set(0, 0x1F, 0x7F, 0x7F), "digit": set('0', '9'),
	"graph": set('!', '~'), "lower": set('a', 'z'), "print": set(' ', '~'),
	"punct": set('!', '/', ':', '@', '[', '`', '{', '~'), "space": set('\t', '\r', ' ', ' '),
	"upper": set('A', 'Z'), "word": set('0', '9', 'A', 'Z', 'a', 'z', '_', '_'), "xdigit": set('0', '9', 'A', 'F', 'a', 'f'),
}

// parseASCIIClass reads [:name:] or [:^name:] at a '[' inside a bracket;
// on anything else it leaves the position alone and reports false.
func (p *parser) parseASCIIClass() (runeSet, bool) {
	i := p.pos + 1
	if i >= len(p.src) || p.src[i] != ':' {
		return nil, false
	}
	i++
	negated := i < len(p.src) && p.src[i] == '^'
	if negated {
		i++
	}
	j := i
	for j < len(p.src) && p.src[j] != ':' {
		j++
	}
	if j+1 >= len(p.src) || p.src[j+1] != ']' {
		return nil, false
	}
	s, ok := asciiClasses[string(p.src[i:j])]
	if !ok {
		return nil, false
	}
	p.pos = j + 2
	if negated {
		s = s.negate()
	}
	return s, true
}

type classOp uint8

const (
	opNone classOp = iota
	opIntersect
	opDifference
	opSymmetric
)

func (o classOp) apply(a, b runeSet) runeSet {
	switch o {
	case opIntersect:
		return a.intersect(b)
	case opDifference:
		return a.minus(b)
	case opSymmetric:
		return a.symdiff(b)
	}
	return b
}

// parseBracket reads a bracketed class, nested classes and set operations
// included, and returns the set it denotes.
func (p *parser) parseBracket() (runeSet, *SyntaxError) {
	open := p.pos
	if err := p.enter(open); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	unclosed := func() *SyntaxError { return p.fail(open, open+1, reasonClassUnclosed) }
	if !p.bumpAndBumpSpace() {
		return nil, unclosed()
	}
	negated := p.char() == '^'
	if negated && !p.bumpAndBumpSpace() {
		return nil, unclosed()
	}
	var acc runeSet
	items := 0
	for p.char() == '-' {
		acc, items = acc.union(runeSet{'-', '-'}), items+1
		if !p.bumpAndBumpSpace() {
			return nil, unclosed()
		}
	}
	if items == 0 && p.char() == ']' {
		acc = runeSet{']', ']'}
		if !p.bumpAndBumpSpace() {
			return nil, unclosed()
		}
	}
	var lhs runeSet
	op := opNone
	foldIf := func(s runeSet) runeSet {
		if p.flags.i {
			return s.fold()
		}
		return s
	}
	for {
		p.bumpSpace()
		if p.eof() {
			return nil, unclosed()
		}
		switch {
		case p.char() == '[':
			if s, ok := p.parseASCIIClass(); ok {
				acc = acc.union(s)
				continue
			}
			s, err := p.parseBracket()
			if err != nil {
				return nil, err
			}
			acc = acc.union(s)
		case p.char() == ']':
			p.bump()
			if op != opNone {
				acc = op.apply(foldIf(lhs), foldIf(acc))
			}
			acc = foldIf(acc)
			if negated {
				acc = acc.negate()
			}
			return acc, nil
		case p.peekIs("&&") || p.peekIs("--") || p.peekIs("~~"):
			next := map[rune]classOp{'&': opIntersect, '-': opDifference, '~': opSymmetric}[p.char()]
			p.pos += 2
			if op != opNone {
				acc = op.apply(foldIf(lhs), foldIf(acc))
			}
			lhs, acc, op = acc, nil, next
		default:
			s, err := p.parseClassRange(unclosed)
			if err != nil {
				return nil, err
			}
			acc = acc.union(s)
		}
	}
}

func (p *parser) parseClassItem() (primitive, *SyntaxError) {
	if p.char() == '\\' {
		return p.parseEscape()
	}
	pr := primitive{kind: primLit, r: p.char(), start: p.pos, end: p.pos + 1}
	p.bump()
	return pr, nil
}

func (p *parser) classSet(pr primitive) (runeSet, *SyntaxError) {
	switch pr.kind {
	case primLit:
		return runeSet{pr.r, pr.r}, nil
	case primClass:
		return pr.set, nil
	}
	return nil, p.fail(pr.start, pr.end, reasonClassEscape)
}

func (p *parser) parseClassRange(unclosed func() *SyntaxError) (runeSet, *SyntaxError) {
	first, err := p.parseClassItem()
	if err != nil {
		return nil, err
	}
	p.bumpSpace()
	if p.eof() {
		return nil, unclosed()
	}
	if p.char() != '-' || p.peekSpace() == ']' || p.peekSpace() == '-' {
		return p.classSet(first)
	}
	if !p.bumpAndBumpSpace() {
		return nil, unclosed()
	}
	last, err := p.parseClassItem()
	if err != nil {
		return nil, err
	}
	for _, pr := range []primitive{first, last} {
		if pr.kind != primLit {
			return nil, p.fail(pr.start, pr.end, reasonClassRangeLiteral)
		}
	}
	if first.r > last.r {
		return nil, p.fail(first.start, last.end, reasonClassRange)
	}
	return runeSet{first.r, last.r}, nil
}
