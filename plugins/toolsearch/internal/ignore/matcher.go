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
}

func newCandidate(path string) candidate {
	c := candidate{path: path, tail: path[strings.LastIndexByte(path, '/')+1:]}
	if path != "" && path[len(path)-1] != '.' {
		c.base = c.tail
		if i := strings.LastIndexByte(c.base, '.'); i >= 0 {
			c.ext = c.base[i:]
		}
	}
	return c
}

// strategy is how a glob is decided. The first six are ripgrep's own literal
// strategies, chosen as it chooses them, so that their quirks carry over;
// the rest are exact shortcuts for the regex, which is run as an NFA.
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

// shortcut evaluates the regex of a glob without the NFA when its tokens
// have a simple shape.
type shortcut uint8

const (
	cutNone      shortcut = iota
	cutTailEnds           // **/*lit: tail ends with lit
	cutStarInner          // a*b: path = a + [^/]* + b
	cutDirInside          // **/lit/**/*: some segment but the last is lit
)

type matcher struct {
	how       strategy
	lit       string // the strategy's literal
	component bool   // sSuffix: lit starts with '/' and a whole-path match counts
	cut       shortcut
	a, b      string // shortcut operands (cutDirInside: "lit/" and "/lit/")
	prog      *program
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
		if !m.shortcut(tokens) {
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
			head, *component = "/", true
		}
	}
	if len(tokens) == 0 || tokens[0].kind == tStar {
		return false
	}
	s, ok := literalRun(tokens)
	if !ok || head+s == "" || head+s == "/" {
		return false
	}
	*lit = head + s
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

func (m *matcher) shortcut(tokens []token) bool {
	n := len(tokens)
	switch {
	case n >= 2 && tokens[0].kind == tRecPrefix && tokens[1].kind == tStar:
		if s, ok := literalRun(tokens[2:]); ok && !strings.Contains(s, "/") {
			m.cut, m.a = cutTailEnds, s
			return true
		}
	case n >= 4 && tokens[0].kind == tRecPrefix && tokens[n-2].kind == tRecMiddle && tokens[n-1].kind == tStar:
		if s, ok := literalRun(tokens[1 : n-2]); ok && !strings.Contains(s, "/") {
			m.cut, m.a, m.b = cutDirInside, s+"/", "/"+s+"/"
			return true
		}
	}
	for i, t := range tokens {
		if t.kind == tStar {
			a, okA := literalRun(tokens[:i])
			b, okB := literalRun(tokens[i+1:])
			if okA && okB {
				m.cut, m.a, m.b = cutStarInner, a, b
				return true
			}
			break
		}
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
	switch m.cut {
	case cutTailEnds:
		return strings.HasSuffix(c.tail, m.a)
	case cutStarInner:
		p := c.path
		return len(p) >= len(m.a)+len(m.b) && strings.HasPrefix(p, m.a) && strings.HasSuffix(p, m.b) &&
			strings.IndexByte(p[len(m.a):len(p)-len(m.b)], '/') < 0
	case cutDirInside:
		return strings.HasPrefix(c.path, m.a) || strings.Contains(c.path, m.b)
	}
	return m.prog.match(c.path)
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
		}
	}
	p.nodes = nil
	return p
}

func (p *program) match(path string) bool {
	if p.nodes != nil {
		return p.matchSparse(path)
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
