package ignore

import (
	"math/bits"
	"strings"
)

// candidate is a path prepared once for all the globs it meets. base and ext
// follow ripgrep's literal fast paths, which see no base name in a path
// ending in '.': those paths never match a glob that ripgrep decides by its
// base name or extension (`foo.`, `*.`), even where the glob's regex would.
type candidate struct {
	path string
	base string // after the last '/'; "" when the path ends in '.'
	ext  string // base from its last '.'; "" without one
	tail string // after the last '/', always
	// dotSegment: some segment starts with '.', which every VCS name does.
	dotSegment bool
}

func newCandidate(path string) candidate {
	c := candidate{path: path, tail: path[strings.LastIndexByte(path, '/')+1:]}
	c.dotSegment = strings.HasPrefix(path, ".") || strings.Contains(path, "/.")
	if path != "" && path[len(path)-1] != '.' {
		c.base = c.tail
		if i := strings.LastIndexByte(c.base, '.'); i >= 0 {
			c.ext = c.base[i:]
		}
	}
	return c
}

// strategy is how a glob is decided: one of ripgrep's literal strategies,
// chosen as ripgrep chooses it so that its quirks carry over, or the regex
// (which sRequiredExt also checks), evaluated by shortcuts or an NFA.
type strategy uint8

const (
	sBaseLiteral strategy = iota // **/lit: base == lit
	sLiteral                     // lit: path == lit
	sExtension                   // **/*.ext: ext == lit
	sPrefix                      // lit/**: path starts with lit
	sSuffix                      // **/a/b: path ends with lit, or equals it without its leading '/'
	sRequiredExt                 // …lit ending .ext: ext == lit, then the regex
	sRegex                       // the regex
)

// shortcut decides one shape of regex without the NFA.
type shortcut struct {
	kind shortcutKind
	a, b string
}

type shortcutKind uint8

const (
	cutEquals    shortcutKind = iota // lit: path == a
	cutTail                          // **/lit: tail == a
	cutTailEnds                      // **/*lit: tail ends with a
	cutStarInner                     // a*b: path = a + [^/]* + b
	cutUnder                         // lit/**/*: path starts with a ("lit/")
	cutDirInside                     // **/lit/**/*: a segment but the last is lit (a "lit/", b "/lit/")
)

// maxExpansions bounds how many brace expansions a glob may have to be run
// as shortcuts instead of as one NFA.
const maxExpansions = 8

type matcher struct {
	how       strategy
	lit       string // the strategy's literal
	component bool   // sSuffix: a path equal to lit without its leading '/' matches
	// The regex, for sRegex and sRequiredExt: any of cuts, or else prog.
	cuts   []shortcut
	prog   *program
	onTail bool // prog is the glob without its leading **/, run on the tail
}

// tailLocal reports a glob **/X where X cannot match a '/': its regex holds
// exactly when X matches the path's last segment.
func tailLocal(tokens []token) bool {
	if len(tokens) < 2 || tokens[0].kind != tRecPrefix {
		return false
	}
	for _, t := range tokens[1:] {
		switch {
		case t.kind == tLiteral && t.lit != "/", t.kind == tAny, t.kind == tStar:
		case t.kind == tClass && !t.class.has('/'):
		default:
			return false
		}
	}
	return true
}

func compileGlob(tokens []token) *matcher {
	m := &matcher{how: sRegex}
	switch lit, ok := literalRun(tokens); {
	case baseLiteral(tokens, &m.lit):
		m.how = sBaseLiteral
	case ok && lit != "":
		m.how, m.lit = sLiteral, lit
	case extension(tokens, &m.lit):
		m.how = sExtension
	case prefix(tokens, &m.lit):
		m.how = sPrefix
	case suffix(tokens, &m.lit, &m.component):
		m.how = sSuffix
	case requiredExt(tokens, &m.lit):
		m.how = sRequiredExt
	}
	if m.how == sRegex || m.how == sRequiredExt {
		if m.cuts = shortcuts(tokens); m.cuts == nil {
			if m.onTail = tailLocal(tokens); m.onTail {
				tokens = tokens[1:]
			}
			m.prog = compileProgram(tokens)
		}
	}
	return m
}

// literalRun joins tokens that are all literals.
func literalRun(tokens []token) (string, bool) {
	var sb strings.Builder
	for _, t := range tokens {
		if t.kind != tLiteral {
			return "", false
		}
		sb.WriteString(t.lit)
	}
	return sb.String(), true
}

func baseLiteral(tokens []token, lit *string) bool {
	if len(tokens) < 2 || tokens[0].kind != tRecPrefix {
		return false
	}
	s, ok := literalRun(tokens[1:])
	if !ok || strings.Contains(s, "/") {
		return false
	}
	*lit = s
	return true
}

func extension(tokens []token, lit *string) bool {
	if len(tokens) < 3 || tokens[0].kind != tRecPrefix || tokens[1].kind != tStar {
		return false
	}
	s, ok := literalRun(tokens[2:])
	if !ok || !strings.HasPrefix(s, ".") || strings.ContainsAny(s[1:], "./") {
		return false
	}
	*lit = s
	return true
}

func prefix(tokens []token, lit *string) bool {
	n := len(tokens)
	if n == 0 || tokens[n-1].kind != tRecSuffix {
		return false
	}
	s, ok := literalRun(tokens[:n-1])
	if !ok {
		return false
	}
	*lit = s + "/"
	return true
}

func suffix(tokens []token, lit *string, component *bool) bool {
	if len(tokens) == 0 {
		return false
	}
	head := ""
	if tokens[0].kind == tRecPrefix {
		tokens = tokens[1:]
		if len(tokens) > 0 && tokens[0].kind == tLiteral {
			head = "/"
		}
	}
	if len(tokens) == 0 || tokens[0].kind == tStar {
		return false
	}
	s, ok := literalRun(tokens)
	if !ok || head+s == "" || head+s == "/" {
		return false
	}
	*lit, *component = head+s, head != ""
	return true
}

func requiredExt(tokens []token, lit *string) bool {
	for i := len(tokens) - 1; i >= 0; i-- {
		t := tokens[i]
		if t.kind != tLiteral || t.lit == "/" {
			return false
		}
		if t.lit == "." {
			s, _ := literalRun(tokens[i:])
			*lit = s
			return true
		}
	}
	return false
}

// shortcuts expresses the regex of tokens as shortcuts, one per brace
// expansion, or returns nil.
func shortcuts(tokens []token) []shortcut {
	expansions := [][]token{nil}
	for _, t := range tokens {
		if t.kind != tAlternates {
			for i := range expansions {
				expansions[i] = append(expansions[i], t)
			}
			continue
		}
		var grown [][]token
		for _, alt := range t.alts {
			if len(alt) == 0 {
				continue
			}
			for _, e := range expansions {
				grown = append(grown, append(append([]token(nil), e...), alt...))
			}
		}
		if len(grown) > maxExpansions {
			return nil
		}
		if len(grown) > 0 { // a group with no branch matches the empty string
			expansions = grown
		}
	}
	cuts := make([]shortcut, 0, len(expansions))
	for _, e := range expansions {
		c, ok := shortcutOf(e)
		if !ok {
			return nil
		}
		cuts = append(cuts, c)
	}
	return cuts
}

// shortcutOf recognises tokens with no alternation.
func shortcutOf(tokens []token) (shortcut, bool) {
	n := len(tokens)
	if s, ok := literalRun(tokens); ok {
		return shortcut{kind: cutEquals, a: s}, true
	}
	if tokens[0].kind == tRecPrefix && n > 1 {
		if s, ok := literalRun(tokens[1:]); ok && !strings.Contains(s, "/") {
			return shortcut{kind: cutTail, a: s}, true
		}
		if s, ok := literalRun(tokens[2:]); ok && tokens[1].kind == tStar && !strings.Contains(s, "/") {
			return shortcut{kind: cutTailEnds, a: s}, true
		}
	}
	if n >= 2 && tokens[n-2].kind == tRecMiddle && tokens[n-1].kind == tStar {
		if s, ok := literalRun(tokens[:n-2]); ok {
			return shortcut{kind: cutUnder, a: s + "/"}, true
		}
		if n < 4 || tokens[0].kind != tRecPrefix {
			return shortcut{}, false
		}
		if s, ok := literalRun(tokens[1 : n-2]); ok && !strings.Contains(s, "/") {
			return shortcut{kind: cutDirInside, a: s + "/", b: "/" + s + "/"}, true
		}
	}
	for i, t := range tokens {
		if t.kind != tLiteral {
			a, okA := literalRun(tokens[:i])
			b, okB := literalRun(tokens[i+1:])
			if t.kind == tStar && okA && okB {
				return shortcut{kind: cutStarInner, a: a, b: b}, true
			}
			break
		}
	}
	return shortcut{}, false
}

func (s *shortcut) match(c *candidate) bool {
	switch s.kind {
	case cutEquals:
		return c.path == s.a
	case cutTail:
		return c.tail == s.a
	case cutTailEnds:
		return strings.HasSuffix(c.tail, s.a)
	case cutStarInner:
		p := c.path
		return len(p) >= len(s.a)+len(s.b) && strings.HasPrefix(p, s.a) && strings.HasSuffix(p, s.b) &&
			strings.IndexByte(p[len(s.a):len(p)-len(s.b)], '/') < 0
	case cutUnder:
		return strings.HasPrefix(c.path, s.a)
	case cutDirInside:
		if s.a[0] == '.' && !c.dotSegment {
			return false
		}
		return strings.HasPrefix(c.path, s.a) || strings.Contains(c.path, s.b)
	}
	return false
}

func (m *matcher) match(c *candidate) bool {
	switch m.how {
	case sBaseLiteral:
		return c.base == m.lit
	case sLiteral:
		return c.path == m.lit
	case sExtension:
		return c.ext == m.lit
	case sPrefix:
		return strings.HasPrefix(c.path, m.lit)
	case sSuffix:
		return (m.component && c.path == m.lit[1:]) || strings.HasSuffix(c.path, m.lit)
	case sRequiredExt:
		if c.ext != m.lit {
			return false
		}
	}
	if m.onTail {
		return m.prog.match(c.tail)
	}
	if m.prog != nil {
		return m.prog.match(c.path)
	}
	for i := range m.cuts {
		if m.cuts[i].match(c) {
			return true
		}
	}
	return false
}

// program is a glob's regex as an NFA over bytes, anchored at both ends.
// Small programs (the usual case) precompute, for each byte-consuming node,
// the set of nodes reachable after it as a bitset, so matching is a loop of
// ORs on the stack. Larger ones follow epsilon edges while matching, which
// needs memory linear in the glob instead of quadratic.
type program struct {
	nodes  []node
	entry  int
	accept int // node index of the accepting node
	// dense tables, when the program has at most denseStates states: state i
	// is consuming node i-1's index in order of sets; state 0 accepts.
	sets   []*byteSet
	start  uint256
	follow []uint256
	// Exact prefilters: the literal text the glob starts and ends with, and
	// the bytes that can end a match.
	pre, suf string
	last     byteSet
}

// uint256 is a bitset of dense states.
type uint256 [4]uint64

const denseStates = 256

// node is a compile-time NFA node: a consuming node (set != nil) goes to
// out[0] after one byte of its set; any other node is an epsilon fork, or
// the accepting node when it has no out.
type node struct {
	set *byteSet
	out []int
}

type builder struct{ nodes []node }

func (b *builder) add(n node) int { b.nodes = append(b.nodes, n); return len(b.nodes) - 1 }

// loop is set* followed by next.
func (b *builder) loop(set *byteSet, next int) int {
	fork := b.add(node{})
	consume := b.add(node{set: set, out: []int{fork}})
	b.nodes[fork].out = []int{consume, next}
	return fork
}

func (b *builder) one(set *byteSet, next int) int { return b.add(node{set: set, out: []int{next}}) }

var slashOnly = func() (s byteSet) { s.add('/'); return }()

// seq compiles tokens in front of next and returns the entry node.
func (b *builder) seq(tokens []token, next int) int {
	for i := len(tokens) - 1; i >= 0; i-- {
		t := tokens[i]
		switch t.kind {
		case tLiteral:
			for j := len(t.lit) - 1; j >= 0; j-- {
				var s byteSet
				s.add(t.lit[j])
				next = b.one(&s, next)
			}
		case tAny:
			next = b.one(&notSlash, next)
		case tStar:
			if i+1 < len(tokens) && tokens[i+1].kind == tStar {
				continue // [^/]*[^/]* is [^/]*: keeps runs of stars linear
			}
			next = b.loop(&notSlash, next)
		case tRecPrefix: // (?:/?|.*/): "" or anything ending in '/'
			next = b.add(node{out: []int{next, b.loop(&anyByte, b.one(&slashOnly, next))}})
		case tRecSuffix: // /.*
			next = b.one(&slashOnly, b.loop(&anyByte, next))
		case tRecMiddle: // (?:/|/.*/)
			inner := b.add(node{out: []int{next, b.loop(&anyByte, b.one(&slashOnly, next))}})
			next = b.one(&slashOnly, inner)
		case tClass:
			next = b.one(t.class, next)
		case tAlternates:
			var outs []int
			for _, alt := range t.alts {
				if len(alt) > 0 {
					outs = append(outs, b.seq(alt, next))
				}
			}
			if len(outs) > 0 {
				next = b.add(node{out: outs})
			}
		}
	}
	return next
}

func compileProgram(tokens []token) *program {
	b := &builder{}
	p := &program{accept: b.add(node{})}
	if len(tokens) == 1 && tokens[0].kind == tRecPrefix {
		p.entry = b.loop(&anyByte, p.accept) // a lone ** matches everything
	} else {
		p.entry = b.seq(tokens, p.accept)
	}
	p.nodes = b.nodes
	p.pre, p.suf = literalEnds(tokens)
	state := make([]int, len(p.nodes))
	for i, n := range p.nodes {
		if n.set != nil {
			p.sets = append(p.sets, n.set)
			state[i] = len(p.sets)
		}
	}
	if len(p.sets) >= denseStates {
		p.sets = nil
		return p
	}
	seen := make([]bool, len(p.nodes))
	var stack []int
	closure := func(from int) (set uint256) {
		clear(seen)
		stack = append(stack[:0], from)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[i] {
				continue
			}
			seen[i] = true
			if i == p.accept || p.nodes[i].set != nil {
				s := state[i]
				set[s/64] |= 1 << (s % 64)
				continue
			}
			stack = append(stack, p.nodes[i].out...)
		}
		return set
	}
	p.start = closure(p.entry)
	p.follow = make([]uint256, len(p.sets)+1)
	for i, n := range p.nodes {
		if n.set != nil {
			p.follow[state[i]] = closure(n.out[0])
			if p.follow[state[i]][0]&1 != 0 {
				for c := range 256 {
					if n.set.has(byte(c)) {
						p.last.add(byte(c))
					}
				}
			}
		}
	}
	p.nodes = nil
	return p
}

// literalEnds returns the literal runs tokens start and end with.
func literalEnds(tokens []token) (pre, suf string) {
	i := 0
	for i < len(tokens) && tokens[i].kind == tLiteral {
		i++
	}
	j := len(tokens)
	for j > i && tokens[j-1].kind == tLiteral {
		j--
	}
	pre, _ = literalRun(tokens[:i])
	suf, _ = literalRun(tokens[j:])
	return pre, suf
}

func (p *program) match(path string) bool {
	if len(path) < len(p.pre)+len(p.suf) || !strings.HasPrefix(path, p.pre) || !strings.HasSuffix(path, p.suf) {
		return false
	}
	if p.nodes != nil {
		return p.matchSparse(path)
	}
	if len(path) > 0 && !p.last.has(path[len(path)-1]) {
		return false
	}
	cur := p.start
	for i := 0; i < len(path); i++ {
		c := path[i]
		var next uint256
		live := false
		for w, word := range cur {
			for word != 0 {
				s := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if s == 0 || !p.sets[s-1].has(c) {
					continue
				}
				f := &p.follow[s]
				next[0] |= f[0]
				next[1] |= f[1]
				next[2] |= f[2]
				next[3] |= f[3]
				live = true
			}
		}
		if !live {
			return false
		}
		cur = next
	}
	return cur[0]&1 != 0
}

// matchSparse runs a large program over node sets, following epsilon edges
// as it goes.
func (p *program) matchSparse(path string) bool {
	n := len(p.nodes)
	cur, next := make([]bool, n), make([]bool, n)
	var stack []int
	add := func(set []bool, from int) {
		stack = append(stack[:0], from)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if set[i] {
				continue
			}
			set[i] = true
			if p.nodes[i].set == nil {
				stack = append(stack, p.nodes[i].out...)
			}
		}
	}
	add(cur, p.entry)
	for i := 0; i < len(path); i++ {
		clear(next)
		live := false
		for j, on := range cur {
			if on && p.nodes[j].set != nil && p.nodes[j].set.has(path[i]) {
				add(next, p.nodes[j].out[0])
				live = true
			}
		}
		if !live {
			return false
		}
		cur, next = next, cur
	}
	return cur[p.accept]
}
