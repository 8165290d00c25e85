package rustregex

import (
	"bytes"
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Matcher answers, for one line or a buffer of lines, whether rg's reading
// of the pattern matches. It is safe for concurrent use.
type Matcher struct {
	re *regexp.Regexp // (?m) translation; never matches '\n'

	// A literal that every match contains, searched for before the regexp
	// runs. exact means a line holds a match exactly when it holds lit.
	lit   *needle
	exact bool

	// Without a literal, bytes one of which every match holds: the bytes
	// that can begin the match, or an element every match goes through.
	// Lines without one are never given to the regexp. fromHit means they
	// begin the match and nothing in the pattern looks behind the match's
	// start, so the regexp can start at the line's first such byte.
	hits    *byteSet
	fromHit bool
	one     int // the only byte of hits, searched for with IndexByte; or -1
	// sure means the pattern matches one character of a class (at least
	// once), so an ASCII byte of hits is a match by itself.
	sure bool

	// chunk is how many bytes of lines the regexp is given at most at a
	// time otherwise: Go runs its fast backtracker only on inputs of at
	// most 256 Kib / the program's length, and its NFA on longer ones is
	// several times slower than both.
	chunk int
}

// Compile reads pattern as ripgrep does (Rust regex syntax, case-sensitive,
// Unicode classes, no multiline) and returns a matcher that never matches
// across or including a '\n'. A refusal is ErrLiteralNewline or a
// *SyntaxError.
func Compile(pattern string) (*Matcher, error) {
	if strings.Contains(pattern, "\n") {
		return nil, ErrLiteralNewline
	}
	tree, serr := parse(pattern)
	if serr != nil {
		return nil, serr
	}
	if err := banNewline(tree); err != nil {
		return nil, err
	}
	var e emitter
	e.emit(tree, true, true)
	if e.err != nil {
		e.err.Pattern = pattern
		return nil, e.err
	}
	expr := "(?m)" + e.b.String()
	if len(expr) > maxExpr {
		return nil, &SyntaxError{Pattern: pattern, Reason: reasonTooLarge, start: 3, end: 3 + utf8.RuneCountInString(pattern)}
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, goError(pattern, err)
	}
	m := &Matcher{re: re, chunk: maxChunk}
	if goTree, err := syntax.Parse(expr, syntax.Perl); err == nil {
		m.chooseLiteral(goTree)
		if m.lit == nil {
			m.chooseBytes(goTree)
		}
		if prog, err := syntax.Compile(goTree.Simplify()); err == nil {
			m.chunk = max(minChunk, min(maxChunk, 256*1024/len(prog.Inst)-1))
		}
	}
	return m, nil
}

// The bounds of Matcher.chunk: below some hundred bytes the cost of a
// call dominates; above some kilobytes the backtracker's bitmap does.
const minChunk, maxChunk = 256, 8 << 10

// maxExpr bounds the translation, which Go parses on each Compile: each
// Unicode class is some kilobytes of ranges.
const maxExpr = 2 << 20

// goError turns Go's refusal of a translation (its limits are smaller than
// Rust's) into a SyntaxError over the whole pattern.
func goError(pattern string, err error) *SyntaxError {
	reason := "pattern cannot be translated for this search: " + err.Error()
	var se *syntax.Error
	if errors.As(err, &se) {
		switch se.Code {
		case syntax.ErrInvalidRepeatSize:
			reason = reasonRepeatTooBig
		case syntax.ErrLarge, syntax.ErrNestingDepth:
			reason = reasonTooLarge
		}
	}
	return &SyntaxError{Pattern: pattern, Reason: reason, start: 3, end: 3 + utf8.RuneCountInString(pattern)}
}

// Match reports whether line (one line, without its '\n' terminator; it
// may contain '\r') holds a match.
func (m *Matcher) Match(line []byte) bool {
	if m.exact {
		s := m.lit.search()
		return s.index(line, 0) >= 0
	}
	return m.re.Match(line)
}

// FindLine returns the bounds [start,end) of the first line of text that
// holds a match, without its '\n'; text is a run of whole lines separated
// by '\n' (the last one may lack it). It returns -1, -1 when none does.
func (m *Matcher) FindLine(text []byte) (start, end int) {
	if len(text) == 0 {
		return -1, -1
	}
	if text[len(text)-1] == '\n' {
		text = text[:len(text)-1] // no line starts after the last terminator
	}
	switch {
	case m.lit != nil:
		return m.scan(text)
	case m.hits != nil:
		return m.skim(text)
	}
	return m.chunks(text)
}

// chunks runs the regexp over text a run of lines at a time. The runs
// start small and double up to m.chunk, so that a match near the start
// costs little and a long search few calls.
func (m *Matcher) chunks(text []byte) (int, int) {
	for off, size := 0, minChunk; off <= len(text); size = min(2*size, m.chunk) { // <=: text may end with an empty line
		end := len(text)
		if off+size < len(text) {
			if i := bytes.IndexByte(text[off+size:], '\n'); i >= 0 {
				end = off + size + i
			}
		}
		if m.re.Match(text[off:end]) {
			return m.bisect(text, off, end)
		}
		off = end + 1
	}
	return -1, -1
}

// skim gives the regexp only the lines that hold a byte of m.hits, one
// line at a time. Even where most lines hold one, this beats running the
// regexp over chunks: a call costs little next to Go's backtracker trying
// every position, and it starts at the first candidate.
func (m *Matcher) skim(text []byte) (int, int) {
	for pos := 0; pos < len(text); { // the pattern cannot match an empty line
		i := m.nextHit(text, pos)
		if i < 0 {
			return -1, -1
		}
		start := bytes.LastIndexByte(text[:i], '\n') + 1
		end := bytes.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += i
		}
		if m.sure && text[i] < utf8.RuneSelf {
			return start, end
		}
		from := start
		if m.fromHit {
			from = i
		}
		if m.re.Match(text[from:end]) {
			return start, end
		}
		pos = end + 1
	}
	return -1, -1
}

// nextHit is the offset of the first byte of m.hits in text[pos:], or -1.
// It tests eight bytes per branch; that is about half again as fast as one
// (bytes.IndexAny, with its own table, is slower than either).
func (m *Matcher) nextHit(text []byte, pos int) int {
	s := text[pos:]
	if m.one >= 0 {
		if i := bytes.IndexByte(s, byte(m.one)); i >= 0 {
			return pos + i
		}
		return -1
	}
	t := m.hits
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if t[s[i]]|t[s[i+1]]|t[s[i+2]]|t[s[i+3]]|t[s[i+4]]|t[s[i+5]]|t[s[i+6]]|t[s[i+7]] != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if t[s[i]] != 0 {
			return pos + i
		}
	}
	return -1
}

// bisect finds the first line in text[lo:hi], which holds a match and
// starts and ends at line boundaries. A match lies within one line, so it
// halves the range at a line break until one line is left.
func (m *Matcher) bisect(text []byte, lo, hi int) (int, int) {
	for {
		mid := lo + (hi-lo)/2
		nl := bytes.IndexByte(text[mid:hi], '\n')
		if nl >= 0 {
			nl += mid
		} else if nl = bytes.LastIndexByte(text[lo:mid], '\n'); nl >= 0 {
			nl += lo
		} else {
			return lo, hi
		}
		if m.re.Match(text[lo:nl]) {
			hi = nl
		} else {
			lo = nl + 1
		}
	}
}

// scan finds the literal, then checks the line around each hit.
func (m *Matcher) scan(text []byte) (int, int) {
	s := m.lit.search()
	for pos := 0; pos <= len(text); {
		hit := s.index(text, pos)
		if hit < 0 {
			return -1, -1
		}
		start := bytes.LastIndexByte(text[:hit], '\n') + 1
		end := bytes.IndexByte(text[hit:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += hit
		}
		if m.exact || m.re.Match(text[start:end]) {
			return start, end
		}
		pos = end + 1
	}
	return -1, -1
}

// chooseLiteral picks the longest literal every match must contain: a
// case-sensitive one if there is any, else an ASCII one under (?i) whose
// letters fold only within ASCII (so not k or s, which fold to K and ſ).
func (m *Matcher) chooseLiteral(tree *syntax.Regexp) {
	var best, bestFold []rune
	required(tree, func(lit []rune, fold bool) {
		if !fold {
			// U+FFFD also matches each invalid byte, which bytes.Index
			// would not find: search for the runs between them.
			for _, run := range runs(lit, func(r rune) bool { return r != utf8.RuneError }) {
				if len(string(run)) > len(string(best)) {
					best = run
				}
			}
			return
		}
		for _, run := range runs(lit, asciiFold) {
			if len(run) > len(bestFold) {
				bestFold = run
			}
		}
	})
	whole := tree.Op == syntax.OpLiteral
	switch {
	case len(best) > 0:
		m.lit = newNeedle([]byte(string(best)), false)
		m.exact = whole && tree.Flags&syntax.FoldCase == 0 && len(best) == len(tree.Rune)
	case len(bestFold) > 1:
		m.lit = newNeedle([]byte(strings.ToLower(string(bestFold))), true)
		m.exact = whole && len(bestFold) == len(tree.Rune)
	}
}

// chooseBytes picks, from the bytes that can begin a match and those that
// can begin each element of the pattern's top sequence that cannot be
// empty, the set least often met in text.
func (m *Matcher) chooseBytes(tree *syntax.Regexp) {
	var best byteSet
	found := false
	if set, empty := leads(tree); !empty {
		best, found, m.fromHit = set, true, !looksBehind(tree)
	}
	for tree.Op == syntax.OpCapture {
		tree = tree.Sub[0]
	}
	if tree.Op == syntax.OpConcat {
		for _, sub := range tree.Sub {
			if set, empty := leads(sub); !empty && (!found || set.cost() < best.cost()) {
				best, found, m.fromHit = set, true, false
			}
		}
	}
	best['\n'] = 0 // the regexp never matches it
	if found {
		m.hits = &best
		m.sure = oneClass(tree)
		m.one = -1
		if n := bytes.Count(best[:], []byte{1}); n == 1 {
			m.one = bytes.IndexByte(best[:], 1)
		}
	}
}

// oneClass reports whether re matches exactly the strings of one or more
// characters of one class, so that a line matches when it holds one.
func oneClass(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpCharClass:
		return true
	case syntax.OpCapture, syntax.OpPlus:
		return oneClass(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == 1 && oneClass(re.Sub[0])
	}
	return false
}

// looksBehind reports whether re holds an assertion that reads the text
// before the position it is tested at.
func looksBehind(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if looksBehind(sub) {
			return true
		}
	}
	return false
}

// required calls f with each literal that every match of re contains.
func required(re *syntax.Regexp, f func(lit []rune, fold bool)) {
	switch re.Op {
	case syntax.OpLiteral:
		f(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			required(s, f)
		}
	case syntax.OpCapture, syntax.OpPlus:
		required(re.Sub[0], f)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			required(re.Sub[0], f)
		}
	}
}

// runs splits lit into its maximal runs of code points that satisfy keep.
func runs(lit []rune, keep func(rune) bool) [][]rune {
	var out [][]rune
	start := 0
	for i := 0; i <= len(lit); i++ {
		if i < len(lit) && keep(lit[i]) {
			continue
		}
		if i > start {
			out = append(out, lit[start:i])
		}
		start = i + 1
	}
	return out
}

// asciiFold reports whether r's whole simple fold orbit is ASCII.
func asciiFold(r rune) bool {
	for o := unicode.SimpleFold(r); ; o = unicode.SimpleFold(o) {
		if o >= utf8.RuneSelf {
			return false
		}
		if o == r {
			return r < utf8.RuneSelf
		}
	}
}
