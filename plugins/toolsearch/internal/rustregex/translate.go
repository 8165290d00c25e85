package rustregex

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// banNewline applies rg's line terminator rule: a literal '\n', or a class
// that holds nothing else, refuses the pattern (S-039); any other class
// simply loses '\n', so the matcher can never match across lines.
func banNewline(n *node) error {
	switch n.op {
	case opLit:
		if n.r == '\n' {
			return ErrLiteralNewline
		}
	case opClass:
		if n.set.single('\n') {
			return ErrLiteralNewline
		}
		n.set = n.set.minus(runeSet{'\n', '\n'})
	case opConcat, opAlt:
		for _, s := range n.subs {
			if err := banNewline(s); err != nil {
				return err
			}
		}
	case opRepeat:
		if n.max == 0 { // Rust reads x{0} as the empty string
			*n = node{op: opEmpty}
			return nil
		}
		return banNewline(n.sub)
	}
	return nil
}

// What may stand on one side of an assertion: the line boundary, a non-word
// character, a word character (Unicode \w). A bit set of them.
const (
	sB   uint8 = 1
	sN   uint8 = 2
	sW   uint8 = 4
	sAll       = sB | sN | sW
)

var baseStates = []uint8{sB, sN, sW}

// allowed reports whether assertion k holds between prev and next.
func allowed(k assertKind, prev, next uint8) bool {
	pw, nw := prev == sW, next == sW
	switch k {
	case aLineStart:
		return prev == sB
	case aLineEnd:
		return next == sB
	case aWord:
		return pw != nw
	case aNotWord:
		return pw == nw
	case aWordStart:
		return !pw && nw
	case aWordEnd:
		return pw && !nw
	case aStartHalf:
		return !pw
	}
	return !nw // aEndHalf
}

// side is what is known about the character on one side of an assertion.
type side struct {
	states uint8
	set    runeSet // the possible characters, when states has no sB
}

var unknownSide = side{states: sAll}

func classify(s runeSet) side {
	if len(s) == 0 {
		return unknownSide
	}
	w := loadTables().word
	var st uint8
	if !s.disjoint(w) {
		st |= sW
	}
	if !s.subsetOf(w) {
		st |= sN
	}
	return side{states: st, set: s}
}

// edge is the side an element shows at its first (or last) character;
// unknownSide when it may match the empty string.
func edge(n *node, first bool) side {
	chars, nullable := edgeChars(n, first)
	if nullable {
		return unknownSide
	}
	return classify(chars)
}

// edgeChars is the set of characters n can start (or end) with, and
// whether n can match the empty string.
func edgeChars(n *node, first bool) (runeSet, bool) {
	switch n.op {
	case opLit:
		if n.fold {
			return foldOrbit(n.r), false
		}
		return runeSet{n.r, n.r}, false
	case opClass:
		return n.set, false
	case opConcat:
		var u runeSet
		for i := range n.subs {
			s := n.subs[i]
			if !first {
				s = n.subs[len(n.subs)-1-i]
			}
			chars, nullable := edgeChars(s, first)
			u = u.union(chars)
			if !nullable {
				return u, false
			}
		}
		return u, true
	case opAlt:
		var u runeSet
		any := false
		for _, s := range n.subs {
			chars, nullable := edgeChars(s, first)
			u, any = u.union(chars), any || nullable
		}
		return u, any
	case opRepeat:
		chars, nullable := edgeChars(n.sub, first)
		return chars, nullable || n.min == 0
	}
	return nil, true // opAssert, opEmpty
}

// goWord is how Go's ASCII \b sees a one-state side: as a word character or
// not; ok is false when it would see some of its characters each way.
func goWord(s side) (word, ok bool) {
	switch s.states {
	case sB, sN, sB | sN:
		return false, true
	case sW:
		aw := loadTables().asciiWord
		if s.set.subsetOf(aw) {
			return true, true
		}
		return false, s.set.disjoint(aw)
	}
	return false, false
}

// goAssert writes "the other side is in S" as a Go assertion, given how Go
// sees the known side (known is true for a word character). after is true
// when the other side is the next character.
func goAssert(S uint8, known, after bool) (string, bool) {
	anchor := "^"
	if after {
		anchor = "$"
	}
	switch S {
	case sAll:
		return "", true
	case 0:
		return never, true
	case sB:
		return anchor, true
	case sW:
		if known {
			return `\B`, true
		}
		return `\b`, true
	case sB | sN:
		if known {
			return `\b`, true
		}
		return `\B`, true
	}
	return "", false
}

// never is a Go class that matches nothing.
const never = `[^\x00-\x{10FFFF}]`

// A consumed character standing for the outer side of a pattern-edge
// assertion: the line boundary, a non-word character, or a word character
// that Go's ASCII \b does (Wa) or does not (Wu) call a word character.
type outer struct {
	state  uint8
	goWord bool
	class  func(*tables) runeSet
}

var outers = []outer{
	{sB, false, nil},
	{sN, false, func(t *tables) runeSet { return t.word.union(runeSet{'\n', '\n'}).negate() }},
	{sW, true, func(t *tables) runeSet { return t.asciiWord }},
	{sW, false, func(t *tables) runeSet { return t.word.minus(t.asciiWord) }},
}

type emitter struct {
	b      strings.Builder
	err    *SyntaxError
	splits int
}

func (e *emitter) refuse(n *node, reason string) {
	if e.err == nil {
		e.err = &SyntaxError{Reason: reason, start: n.pos, end: max(n.end, n.pos+1)}
	}
}

func (e *emitter) emit(n *node, atStart, atEnd bool) {
	switch n.op {
	case opLit:
		e.lits([]*node{n})
	case opClass:
		e.class(n.set)
	case opConcat:
		e.concat(n.subs, atStart, atEnd)
	case opAlt:
		e.b.WriteString("(?:")
		for i, s := range n.subs {
			if i > 0 {
				e.b.WriteByte('|')
			}
			e.emit(s, atStart, atEnd)
		}
		e.b.WriteByte(')')
	case opRepeat:
		e.b.WriteString("(?:")
		e.emit(n.sub, false, false)
		e.b.WriteByte(')')
		switch {
		case n.min == 0 && n.max < 0:
			e.b.WriteByte('*')
		case n.min == 1 && n.max < 0:
			e.b.WriteByte('+')
		case n.max < 0:
			fmt.Fprintf(&e.b, "{%d,}", n.min)
		case n.min == n.max:
			fmt.Fprintf(&e.b, "{%d}", n.min)
		default:
			fmt.Fprintf(&e.b, "{%d,%d}", n.min, n.max)
		}
	case opAssert:
		e.concat([]*node{n}, atStart, atEnd)
	}
}

// concat writes a sequence. Word assertions at the very start (end) of the
// pattern look at a character outside the match: they are written by
// consuming that character instead, with a Unicode class, since a line
// matches either way. Those between two elements are decided from the
// elements' edge characters where that is possible.
func (e *emitter) concat(all []*node, atStart, atEnd bool) {
	var items []*node
	for _, n := range all {
		if n.op != opEmpty {
			items = append(items, n)
		}
	}
	isAssert := func(n *node) bool { return n.op == opAssert }
	lead := 0
	for atStart && lead < len(items) && isAssert(items[lead]) {
		lead++
	}
	if atStart && atEnd && lead == len(items) && lead > 0 {
		e.assertionsOnly(items)
		return
	}
	trail := len(items)
	for atEnd && trail > lead && isAssert(items[trail-1]) {
		trail--
	}
	// An assertion beside an element that may match empty cannot see past
	// it; the sequence is then split in two (see split).
	undecided := func(s side) bool { return s.states != sN && s.states != sW }
	core := &node{op: opConcat, subs: items[lead:trail]}
	if lead > 0 && lead < trail && undecided(edge(core, true)) && e.split(items, lead, atStart, atEnd) ||
		trail < len(items) && lead < trail && undecided(edge(core, false)) && e.split(items, trail-1, atStart, atEnd) {
		return
	}
	for i := lead; i < trail; i++ {
		n := items[i]
		if n.op != opAssert || n.kind == aLineStart || n.kind == aLineEnd {
			continue
		}
		if i > lead && undecided(oneSide(items, i, -1)) && e.split(items, i-1, atStart, atEnd) ||
			i+1 < trail && undecided(oneSide(items, i, 1)) && e.split(items, i+1, atStart, atEnd) {
			return
		}
	}
	for i := lead; i < trail; i++ {
		if n := items[i]; n.op == opAssert && n.kind != aLineStart && n.kind != aLineEnd {
			narrow(items, i)
		}
	}
	var first, last side
	if lead > 0 {
		first = edge(core, true)
	}
	if trail < len(items) {
		last = edge(core, false)
	}
	if lead > 0 && trail == lead+1 && trail < len(items) && first.states == sN|sW {
		if chars, rest, ok := splitChar(items[lead]); ok && rest == nil {
			e.aroundChar(items[:lead], chars, items[trail:])
			return
		}
	}
	// An edge run next to a character that may or may not be a word
	// character consumes that character itself, split by wordness.
	var firstChars, lastChars runeSet
	var firstRest, lastRest *node
	from, to := lead, trail
	if lead > 0 && lead < trail && first.states == sN|sW {
		if chars, rest, ok := splitChar(items[lead]); ok {
			firstChars, firstRest, from = chars, rest, lead+1
		}
	}
	if trail < len(items) && from < trail && last.states == sN|sW {
		if chars, rest, ok := splitChar(items[trail-1]); ok {
			lastChars, lastRest, to = chars, rest, trail-1
		}
	}
	if lead > 0 {
		e.edgeRun(items[:lead], first, true, firstChars)
	}
	if firstRest != nil {
		e.emit(firstRest, false, false)
	}
	for i := from; i < to; i++ {
		n := items[i]
		switch {
		case n.op == opLit && n.fold:
			j := i
			for j < to && items[j].op == opLit && items[j].fold {
				j++
			}
			e.lits(items[i:j])
			i = j - 1
		case n.op == opAssert && n.kind == aLineStart:
			e.b.WriteByte('^')
		case n.op == opAssert && n.kind == aLineEnd:
			e.b.WriteByte('$')
		case n.op == opAssert:
			e.middle(items, i)
		default:
			e.emit(n, atStart && i == 0, atEnd && i == len(items)-1)
		}
	}
	if lastRest != nil {
		e.emit(lastRest, false, false)
	}
	if trail < len(items) {
		e.edgeRun(items[trail:], last, false, lastChars)
	}
}

// maxSplits bounds how many times one pattern is split by split.
const maxSplits = 16

// split writes a sequence whose element i may match empty (x* or x{0,n})
// as two alternatives, one where the element matches at least once and one
// without it, so that an assertion beside it sees a character, or what
// stands beyond. It reports false, writing nothing, for any other element.
func (e *emitter) split(items []*node, i int, atStart, atEnd bool) bool {
	n := items[i]
	if n.op != opRepeat || n.min != 0 || e.splits >= maxSplits {
		return false
	}
	e.splits++
	with := cloneAll(items)
	with[i] = &node{op: opRepeat, sub: n.sub, min: 1, max: n.max, pos: n.pos, end: n.end}
	without := cloneAll(append(append([]*node{}, items[:i]...), items[i+1:]...))
	alt := &node{op: opAlt, subs: []*node{{op: opConcat, subs: with}, {op: opConcat, subs: without}}}
	if n.max == 0 {
		alt = alt.subs[1]
	}
	e.emit(alt, atStart, atEnd)
	return true
}

// cloneAll copies nodes deeply: narrow rewrites them in place, and the two
// alternatives of a split must not share them.
func cloneAll(ns []*node) []*node {
	if ns == nil {
		return nil
	}
	out := make([]*node, len(ns))
	for i, n := range ns {
		out[i] = clone(n)
	}
	return out
}

func clone(n *node) *node {
	c := *n
	c.subs = cloneAll(n.subs)
	if n.sub != nil {
		c.sub = clone(n.sub)
	}
	return &c
}

func (e *emitter) lits(ns []*node) {
	if ns[0].fold {
		e.b.WriteString("(?i:")
	}
	for _, n := range ns {
		writeRune(&e.b, n.r)
	}
	if ns[0].fold {
		e.b.WriteByte(')')
	}
}

// writeRune writes r so that Go reads it as that one code point, in a class
// or out of one: printable text as itself (the translations of Unicode
// classes are long, and Go parses them on every Compile), the rest escaped.
func writeRune(b *strings.Builder, r rune) {
	switch {
	case r < utf8.RuneSelf && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
		b.WriteRune(r)
	case r < utf8.RuneSelf && r > ' ' && r != 0x7F:
		b.WriteByte('\\')
		b.WriteRune(r)
	case r >= utf8.RuneSelf && r != utf8.RuneError && unicode.IsPrint(r):
		b.WriteRune(r)
	default:
		b.WriteString(`\x{`)
		b.WriteString(strconv.FormatInt(int64(r), 16))
		b.WriteByte('}')
	}
}

func (e *emitter) class(s runeSet) {
	if len(s) == 0 {
		e.b.WriteString(never)
		return
	}
	e.b.WriteByte('[')
	if c := s.negate(); len(c) < len(s) {
		e.b.WriteByte('^')
		s = c
	}
	for i := 0; i < len(s); i += 2 {
		writeRune(&e.b, s[i])
		if s[i+1] != s[i] {
			e.b.WriteByte('-')
			writeRune(&e.b, s[i+1])
		}
	}
	e.b.WriteByte(']')
}

// oneSide is the side next to items[i], looking backward (dir -1) or
// forward: the characters of the elements there, up to the first that
// cannot match empty, or the line boundary when an anchor stands there.
func oneSide(items []*node, i, dir int) side {
	var u runeSet
	for j := i + dir; j >= 0 && j < len(items); j += dir {
		n := items[j]
		if n.op == opAssert {
			if dir < 0 && n.kind == aLineStart || dir > 0 && n.kind == aLineEnd {
				s := classify(u)
				if len(u) == 0 {
					s = side{}
				}
				s.states |= sB
				return s
			}
			continue
		}
		chars, nullable := edgeChars(n, dir > 0)
		u = u.union(chars)
		if !nullable {
			return classify(u)
		}
	}
	return unknownSide
}

func eachState(mask uint8, f func(uint8)) {
	for _, s := range baseStates {
		if mask&s != 0 {
			f(s)
		}
	}
}

// narrow resolves a word assertion between two elements when one side is
// known and the other is a single character (a literal or a class, or one
// repeated at least once): that character's set loses the members the
// assertion rules out, exactly, and the assertion becomes empty.
func narrow(items []*node, i int) {
	n := items[i]
	prev, next := oneSide(items, i, -1), oneSide(items, i, 1)
	for _, c := range []struct {
		known side
		j     int
		after bool
	}{{prev, i + 1, true}, {next, i - 1, false}} {
		if c.j < 0 || c.j >= len(items) || c.known.states&(c.known.states-1) != 0 {
			continue
		}
		m := items[c.j]
		chars, rest, ok := splitChar(m)
		if !ok {
			continue
		}
		w := loadTables().word
		var keep runeSet
		for _, st := range []uint8{sN, sW} {
			p, q := c.known.states, st
			if !c.after {
				p, q = st, c.known.states
			}
			if !allowed(n.kind, p, q) {
				continue
			}
			if st == sW {
				keep = keep.union(chars.intersect(w))
			} else {
				keep = keep.union(chars.minus(w))
			}
		}
		narrowed := &node{op: opClass, set: keep, pos: m.pos, end: m.end}
		if rest != nil { // x{2,5} next to it becomes x'x{1,4}, or x{1,4}x' before it
			subs := []*node{narrowed, rest}
			if !c.after {
				subs = []*node{rest, narrowed}
			}
			narrowed = &node{op: opConcat, subs: subs, pos: m.pos, end: m.end}
		}
		*m = *narrowed
		n.op = opEmpty
		return
	}
	if i > 0 && i+1 < len(items) {
		splitPair(items, i)
	}
}

// splitPair resolves a word assertion between two single characters of
// unknown wordness: the pair becomes one alternative per pair of sides the
// assertion allows, each character narrowed to that side.
func splitPair(items []*node, i int) {
	prev, next, n := items[i-1], items[i+1], items[i]
	pc, prest, ok1 := splitChar(prev)
	nc, nrest, ok2 := splitChar(next)
	if !ok1 || !ok2 {
		return
	}
	w := loadTables().word
	part := func(chars runeSet, st uint8) runeSet {
		if st == sW {
			return chars.intersect(w)
		}
		return chars.minus(w)
	}
	alt := &node{op: opAlt, pos: n.pos, end: n.end}
	for _, p := range []uint8{sN, sW} {
		for _, q := range []uint8{sN, sW} {
			a, b := part(pc, p), part(nc, q)
			if allowed(n.kind, p, q) && len(a) > 0 && len(b) > 0 {
				alt.subs = append(alt.subs, &node{op: opConcat, subs: []*node{{op: opClass, set: a}, {op: opClass, set: b}}})
			}
		}
	}
	if len(alt.subs) == 0 {
		alt = &node{op: opClass, pos: n.pos, end: n.end} // never matches
	}
	for _, r := range []struct {
		at   *node
		rest *node
	}{{prev, prest}, {next, nrest}} {
		if r.rest == nil {
			*r.at = node{op: opEmpty}
		} else {
			*r.at = *r.rest
		}
	}
	*n = *alt
}

// splitChar splits an element that consumes one character first (or last)
// into the set of that character and the rest of the element (nil when it
// is that character alone): a literal, a class, or one of them repeated at
// least once.
func splitChar(n *node) (chars runeSet, rest *node, ok bool) {
	if n.op == opRepeat && n.min >= 1 {
		chars, _, ok = splitChar(n.sub)
		rest = &node{op: opRepeat, sub: n.sub, min: n.min - 1, max: n.max, pos: n.pos, end: n.end}
		if rest.max > 0 {
			rest.max--
		}
		return chars, rest, ok && (n.sub.op == opLit || n.sub.op == opClass)
	}
	switch {
	case n.op == opClass:
		return n.set, nil, true
	case n.op == opLit && n.fold:
		return foldOrbit(n.r), nil, true
	case n.op == opLit:
		return runeSet{n.r, n.r}, nil, true
	}
	return nil, nil, false
}

// middle writes a word assertion between two elements.
func (e *emitter) middle(items []*node, i int) {
	n := items[i]
	prev, next := oneSide(items, i, -1), oneSide(items, i, 1)
	yes, no := false, false
	eachState(prev.states, func(p uint8) {
		eachState(next.states, func(q uint8) {
			if allowed(n.kind, p, q) {
				yes = true
			} else {
				no = true
			}
		})
	})
	switch {
	case !no:
		return
	case !yes:
		e.b.WriteString(never)
		return
	}
	for _, try := range []struct {
		known side
		after bool
	}{{prev, true}, {next, false}} {
		gw, ok := goWord(try.known)
		if !ok {
			continue
		}
		// The other side's allowed states must not depend on which of
		// the known side's states holds.
		S, consistent := uint8(0), true
		eachState(sAll, func(o uint8) {
			yes, no := false, false
			eachState(try.known.states, func(k uint8) {
				p, q := k, o
				if !try.after {
					p, q = o, k
				}
				if allowed(n.kind, p, q) {
					yes = true
				} else {
					no = true
				}
			})
			if yes {
				S |= o
			}
			consistent = consistent && !(yes && no)
		})
		if !consistent {
			continue
		}
		if s, ok := goAssert(S, gw, try.after); ok {
			e.b.WriteString(s)
			return
		}
	}
	switch n.kind {
	case aWord: // Go's ASCII \b: the documented residual difference
		e.b.WriteString(`\b`)
	case aNotWord:
		e.b.WriteString(`\B`)
	default:
		e.refuse(n, reasonWordAssertion)
	}
}

// edgeRun writes a run of assertions at the start (atStart) or the end of
// the pattern by consuming the character outside the match (or anchoring at
// the line boundary) and asserting on the inner side, which is what the rest
// of the pattern shows them. With absorb, the inner character is consumed
// here too, keeping in each alternative only those of absorb that fit.
func (e *emitter) edgeRun(run []*node, inner side, atStart bool, absorb runeSet) {
	t := loadTables()
	type group struct {
		req      string
		boundary bool
		chars    runeSet
		count    int
	}
	var groups []*group
	for _, o := range outers {
		var S uint8
		eachState(sAll, func(x uint8) {
			p, q := o.state, x
			if !atStart {
				p, q = x, o.state
			}
			ok := true
			for _, a := range run {
				ok = ok && allowed(a.kind, p, q)
			}
			if ok {
				S |= x
			}
		})
		var req string
		switch {
		case absorb != nil:
			var keep runeSet
			if S&sW != 0 {
				keep = absorb.intersect(t.word)
			}
			if S&sN != 0 {
				keep = keep.union(absorb.minus(t.word))
			}
			if len(keep) == 0 {
				continue
			}
			req = classString(keep)
		case inner.states&S == inner.states:
		case inner.states&S == 0:
			continue
		default:
			var ok bool
			if req, ok = goAssert(S, o.goWord, atStart); !ok {
				e.refuse(run[0], reasonWordAssertion)
				return
			}
		}
		var g *group
		for _, h := range groups {
			if h.req == req {
				g = h
			}
		}
		if g == nil {
			g = &group{req: req}
			groups = append(groups, g)
		}
		g.count++
		if o.class == nil {
			g.boundary = true
		} else {
			g.chars = g.chars.union(o.class(t))
		}
	}
	if len(groups) == 0 {
		e.b.WriteString(never)
		return
	}
	if len(groups) == 1 && groups[0].count == len(outers) {
		e.b.WriteString(groups[0].req) // holds whatever stands outside
		return
	}
	alts := make([]string, len(groups))
	for i, g := range groups {
		var bound, chars string
		if g.boundary {
			bound = "$"
			if atStart {
				bound = "^"
			}
		}
		if len(g.chars) > 0 {
			chars = classString(g.chars)
		}
		outside := bound + chars
		if bound != "" && chars != "" {
			outside = "(?:" + bound + "|" + chars + ")"
		}
		if atStart {
			alts[i] = outside + g.req
		} else {
			alts[i] = g.req + outside
		}
	}
	if len(alts) == 1 {
		e.b.WriteString(alts[0])
		return
	}
	e.b.WriteString("(?:" + strings.Join(alts, "|") + ")")
}

// assertionsOnly writes a pattern (or branch) made of assertions alone: it
// matches where the two characters around one position satisfy them all.
func (e *emitter) assertionsOnly(run []*node) {
	var alts []string
	for _, p := range baseStates {
		for _, q := range baseStates {
			ok := true
			for _, a := range run {
				ok = ok && allowed(a.kind, p, q)
			}
			if ok {
				alts = append(alts, outsideString(p, true)+outsideString(q, false))
			}
		}
	}
	switch len(alts) {
	case 0:
		e.b.WriteString(never)
	case len(baseStates) * len(baseStates):
	default:
		e.b.WriteString("(?:" + strings.Join(alts, "|") + ")")
	}
}

// aroundChar writes one character of mixed wordness with edge runs of
// assertions on both sides: one alternative per line boundary or kind of
// character before it, kind of the character itself, and after it.
func (e *emitter) aroundChar(before []*node, chars runeSet, after []*node) {
	t := loadTables()
	var alts []string
	for _, c := range []uint8{sN, sW} {
		part := chars.minus(t.word)
		if c == sW {
			part = chars.intersect(t.word)
		}
		if len(part) == 0 {
			continue
		}
		for _, p := range baseStates {
			for _, q := range baseStates {
				ok := true
				for _, a := range before {
					ok = ok && allowed(a.kind, p, c)
				}
				for _, a := range after {
					ok = ok && allowed(a.kind, c, q)
				}
				if ok {
					alts = append(alts, outsideString(p, true)+classString(part)+outsideString(q, false))
				}
			}
		}
	}
	if len(alts) == 0 {
		e.b.WriteString(never)
		return
	}
	e.b.WriteString("(?:" + strings.Join(alts, "|") + ")")
}

// outsideString matches what stands in state st just outside a match: the
// line boundary (at its start or end), or one non-word or word character.
func outsideString(st uint8, start bool) string {
	t := loadTables()
	switch {
	case st == sB && start:
		return "^"
	case st == sB:
		return "$"
	case st == sN:
		return classString(t.word.union(runeSet{'\n', '\n'}).negate())
	}
	return classString(t.word)
}

func classString(s runeSet) string {
	var e emitter
	e.class(s)
	return e.b.String()
}
