// Package ignore decides which walked entries the search tools visit, as
// ripgrep 14.1.1 decides it: override globs (--glob), ignore files
// (.rgignore, .ignore, .gitignore, .git/info/exclude) and hidden names. It
// matches paths only; reading directories and files is the caller's job.
package ignore

import (
	"fmt"
	"unicode/utf8"

	"github.com/gordis-run/gordis/internal/clip"
)

// GlobError is a glob ripgrep's parser refuses. Glob is the line as given,
// after its trailing whitespace is dropped.
type GlobError struct{ Glob, Reason string }

func (e *GlobError) Error() string {
	return "error parsing glob '" + clip.String(e.Glob) + "': " + e.Reason
}

// The reasons ripgrep 14.1.1 gives.
const (
	reasonUnclosedClass = "unclosed character class; missing ']'"
	reasonUnclosedAlt   = "unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"
	reasonNestedAlt     = "nested alternate groups are not allowed"
	reasonDangling      = `dangling '\'`
)

func reasonRange(lo, hi rune) string {
	return fmt.Sprintf("invalid range; '%c' > '%c'", lo, hi)
}

type tokenKind uint8

const (
	tLiteral    tokenKind = iota // one character, as its bytes
	tAny                         // ?: one byte other than '/'
	tStar                        // *: bytes other than '/'
	tRecPrefix                   // leading **/: nothing, "/", or anything ending in '/'
	tRecSuffix                   // trailing /**: '/' then anything
	tRecMiddle                   // /**/: '/', or '/' … '/'
	tClass                       // [...]: one byte of a set
	tAlternates                  // {a,b}
)

type token struct {
	kind  tokenKind
	lit   string    // tLiteral
	class *byteSet  // tClass
	alts  [][]token // tAlternates: the non-empty branches only
}

// byteSet is a set of bytes. Ripgrep compiles globs to a byte regex, so a
// class or '?' stands for one byte, never one multi-byte character.
type byteSet [4]uint64

func (s *byteSet) add(b byte)      { s[b>>6] |= 1 << (b & 63) }
func (s *byteSet) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }
func (s *byteSet) addRange(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		s.add(byte(c))
	}
}

var (
	notSlash = func() (s byteSet) { s.addRange(0, 255); s[0] &^= 1 << '/'; return }()
	anyByte  = func() (s byteSet) { s.addRange(0, 255); return }()
)

// globParser turns one glob into tokens with ripgrep's rules for gitignore
// globs: '*' and '?' stop at '/', '\' escapes, and {…} does not nest.
type globParser struct {
	glob      string
	pos       int // byte offset of the next character
	prev, cur rune
	stack     [][]token // stack[0] is the glob; each open {…} adds its current branch
}

// char is a character of the glob with its bytes, which differ from the
// rune's encoding only for invalid UTF-8 (kept byte for byte).
type char struct {
	r   rune
	raw string
}

func (p *globParser) peek() (rune, bool) {
	if p.pos >= len(p.glob) {
		return 0, false
	}
	r, _ := utf8.DecodeRuneInString(p.glob[p.pos:])
	return r, true
}

func (p *globParser) bump() (char, bool) {
	p.prev = p.cur
	if p.pos >= len(p.glob) {
		p.cur = -1
		return char{}, false
	}
	r, n := utf8.DecodeRuneInString(p.glob[p.pos:])
	c := char{r, p.glob[p.pos : p.pos+n]}
	p.pos += n
	p.cur = r
	return c, true
}

func (p *globParser) push(ts ...token) {
	top := len(p.stack) - 1
	p.stack[top] = append(p.stack[top], ts...)
}

// parseGlob returns the tokens of glob, or the reason ripgrep refuses it.
func parseGlob(glob string) ([]token, string) {
	p := &globParser{glob: glob, prev: -1, cur: -1, stack: [][]token{nil}}
	for {
		c, ok := p.bump()
		if !ok {
			break
		}
		var reason string
		switch c.r {
		case '?':
			p.push(token{kind: tAny})
		case '*':
			p.star()
		case '[':
			reason = p.class()
		case '{':
			if len(p.stack) > 1 {
				reason = reasonNestedAlt
			}
			p.stack = append(p.stack, nil)
		case '}':
			// A '}' with no open group adds an alternation with no branch,
			// which matches the empty string but still counts as a token.
			var alts [][]token
			for len(p.stack) > 1 {
				if b := p.stack[len(p.stack)-1]; len(b) > 0 {
					alts = append(alts, b)
				}
				p.stack = p.stack[:len(p.stack)-1]
			}
			p.push(token{kind: tAlternates, alts: alts})
		case ',':
			if len(p.stack) > 1 {
				p.stack = append(p.stack, nil)
			} else {
				p.push(token{kind: tLiteral, lit: c.raw})
			}
		case '\\':
			e, ok := p.bump()
			if !ok {
				reason = reasonDangling
			}
			p.push(token{kind: tLiteral, lit: e.raw})
		default:
			p.push(token{kind: tLiteral, lit: c.raw})
		}
		if reason != "" {
			return nil, reason
		}
	}
	if len(p.stack) > 1 {
		return nil, reasonUnclosedAlt
	}
	return p.stack[0], ""
}

// star handles a '*' just read. "**" is recursive only next to a separator,
// at the start of the glob or a branch, or at its end; elsewhere it is two
// stars. Recursive tokens swallow the '/' they stand beside.
func (p *globParser) star() {
	before := p.prev
	if r, ok := p.peek(); !ok || r != '*' {
		p.push(token{kind: tStar})
		return
	}
	p.bump()
	top := p.stack[len(p.stack)-1]
	next, ok := p.peek()
	if len(top) == 0 {
		if ok && next != '/' {
			p.push(token{kind: tStar}, token{kind: tStar})
			return
		}
		p.push(token{kind: tRecPrefix})
		p.bump()
		return
	}
	if before != '/' && (len(p.stack) <= 1 || (before != ',' && before != '{')) {
		p.push(token{kind: tStar}, token{kind: tStar})
		return
	}
	suffix := false
	switch {
	case !ok:
		suffix = true
	case (next == ',' || next == '}') && len(p.stack) >= 2:
		suffix = true
	case next == '/':
		p.bump()
	default:
		p.push(token{kind: tStar}, token{kind: tStar})
		return
	}
	last := top[len(top)-1]
	p.stack[len(p.stack)-1] = top[:len(top)-1]
	switch {
	case last.kind == tRecPrefix || last.kind == tRecSuffix:
		p.push(last)
	case suffix:
		p.push(token{kind: tRecSuffix})
	default:
		p.push(token{kind: tRecMiddle})
	}
}

// class reads a character class after its '['. A ']' or '-' first is
// literal, a '-' last is literal, and '\' has no special meaning inside.
func (p *globParser) class() string {
	type bound struct{ lo, hi char }
	var items []bound
	negated := false
	if r, ok := p.peek(); ok && (r == '!' || r == '^') {
		p.bump()
		negated = true
	}
	first, inRange := true, false
	for {
		c, ok := p.bump()
		if !ok {
			return reasonUnclosedClass
		}
		switch {
		case c.r == ']' && !first:
			if inRange {
				items = append(items, bound{char{'-', "-"}, char{'-', "-"}})
			}
			set := classSet(negated, len(items), func(i int) (char, char) { return items[i].lo, items[i].hi })
			p.push(token{kind: tClass, class: set})
			return ""
		case c.r == '-' && !first && !inRange:
			inRange = true
		case inRange:
			last := &items[len(items)-1]
			last.hi = c
			if last.hi.r < last.lo.r {
				return reasonRange(last.lo.r, last.hi.r)
			}
			inRange = false
		default:
			items = append(items, bound{c, c})
		}
		first = false
	}
}

// classSet builds the byte set ripgrep's regex gives the class: each
// character's UTF-8 bytes become separate members, and a range spans from
// the last byte of its low end to the first byte of its high end.
func classSet(negated bool, n int, item func(int) (char, char)) *byteSet {
	var s byteSet
	for i := range n {
		lo, hi := item(i)
		if lo == hi {
			for j := range len(lo.raw) {
				s.add(lo.raw[j])
			}
			continue
		}
		for j := range len(lo.raw) - 1 {
			s.add(lo.raw[j])
		}
		if a, b := lo.raw[len(lo.raw)-1], hi.raw[0]; a <= b {
			s.addRange(a, b)
		}
		for j := 1; j < len(hi.raw); j++ {
			s.add(hi.raw[j])
		}
	}
	if negated {
		for i := range s {
			s[i] = ^s[i]
		}
	}
	return &s
}
