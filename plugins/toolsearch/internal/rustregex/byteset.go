package rustregex

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// byteSet is a set of byte values, 1 for a member and 0 otherwise, so that
// a scan tests a byte with one load and several bytes with one branch.
type byteSet [256]uint8

// leads is the set of bytes that can begin a match of re in UTF-8 text, and
// whether re can match the empty string (then a match need not begin with
// any of them). Go's regexp reads each invalid byte as U+FFFD, so a class
// or literal holding U+FFFD can begin at any byte from 0x80 up.
func leads(re *syntax.Regexp) (set byteSet, empty bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return set, true
		}
		r := re.Rune[0]
		set.addRune(r)
		if re.Flags&syntax.FoldCase != 0 {
			for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
				set.addRune(o)
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			set.addRange(re.Rune[i], re.Rune[i+1])
		}
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		set.addRange(0, unicode.MaxRune)
	case syntax.OpCapture, syntax.OpPlus:
		return leads(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		set, _ = leads(re.Sub[0])
		return set, true
	case syntax.OpRepeat:
		set, empty = leads(re.Sub[0])
		return set, empty || re.Min == 0
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			s, e := leads(sub)
			set.union(&s)
			if !e {
				return set, false
			}
		}
		return set, true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, e := leads(sub)
			set.union(&s)
			empty = empty || e
		}
		return set, empty
	case syntax.OpNoMatch:
	default: // empty-width assertions and OpEmptyMatch
		return set, true
	}
	return set, false
}

func (s *byteSet) union(t *byteSet) {
	for i, in := range t {
		s[i] |= in
	}
}

func (s *byteSet) addRune(r rune) { s.addRange(r, r) }

// addRange adds the lead bytes of the code points lo..hi, which rise with
// the code point.
func (s *byteSet) addRange(lo, hi rune) {
	for c := lo; c <= hi && c < utf8.RuneSelf; c++ {
		s[c] = 1
	}
	if hi < utf8.RuneSelf {
		return
	}
	if lo <= utf8.RuneError && utf8.RuneError <= hi {
		for c := 0x80; c < len(s); c++ {
			s[c] = 1
		}
		return
	}
	// Surrogates have no encoding of their own (Go writes U+FFFD).
	const surrLo, surrHi = 0xD800, 0xDFFF
	lo, hi = max(lo, utf8.RuneSelf), min(hi, unicode.MaxRune)
	if surrLo <= lo && lo <= surrHi {
		lo = surrHi + 1
	}
	if surrLo <= hi && hi <= surrHi {
		hi = surrLo - 1
	}
	if lo > hi {
		return
	}
	var a, b [utf8.UTFMax]byte
	utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(b[:], hi)
	for c := int(a[0]); c <= int(b[0]); c++ {
		s[c] = 1
	}
}

// cost ranks a set by how often its bytes are met in text, roughly, as
// in source code and prose: spaces most, then lower-case letters, then
// other printable ASCII, then control and non-ASCII bytes.
func (s *byteSet) cost() int {
	n := 0
	for c, in := range s {
		switch {
		case in == 0:
		case c == ' ':
			n += 200
		case c == '\t' || 'a' <= c && c <= 'z':
			n += 20
		case ' ' < c && c < utf8.RuneSelf-1:
			n += 4
		default:
			n++
		}
	}
	return n
}
