package rustregex

import (
	"bytes"
	"slices"
	"strings"
	"sync/atomic"
)

// needle is a byte string every match contains, and the bytes of it to
// search for first.
//
// bytes.Index looks for a literal's first byte and compares at each one it
// finds, however common that byte is in the text ('f' of "func" in text
// full of "if" and "of"), and each stop costs a call. A search for the
// literal's rarest byte runs at memory speed instead, as long as that byte
// is rare in the text at hand, which a fixed ranking can only guess. So a
// search starts from the byte of the literal that ranks rarest, and when
// it stops in vain too often, counts the literal's rarest few bytes in the
// text ahead and goes on with the one met least. The next search starts
// from the byte the last choice settled on: a file's next chunk, or the
// next file, is likely to be text of the same kind.
type needle struct {
	b    []byte // lower case when fold
	fold bool   // ASCII letters match either case
	// rare: offsets in b of its distinct bytes that rank rarest, rarest
	// first; at most maxRare of them.
	rare []int
	// start: the offset in b of the byte a search looks for first.
	start atomic.Int32
}

const maxRare = 4

func newNeedle(b []byte, fold bool) *needle {
	l := &needle{b: b, fold: fold}
	for i, c := range b {
		if bytes.IndexByte(b[:i], c) < 0 {
			l.rare = append(l.rare, i)
		}
	}
	slices.SortStableFunc(l.rare, func(i, j int) int { return int(rank(b[j])) - int(rank(b[i])) })
	l.rare = l.rare[:min(len(l.rare), maxRare)]
	l.start.Store(int32(l.rare[0]))
	return l
}

// frequent lists bytes from the most to the least common in source code
// and prose, roughly; every other byte ranks rarer than all of them.
const frequent = " etaoinsrlcdumphfgbywvkxqjz\n\t.,()_;=\"'/*-:{}0123456789ETAOINSRLCDUMPHFGBYWVKXQJZ[]<>&|!#+"

func rank(c byte) int {
	if i := strings.IndexByte(frequent, c); i >= 0 {
		return i
	}
	return len(frequent)
}

// A search that stops in vain retune times, less than sparse bytes apart
// on average, counts the candidates in the next sample bytes; it does so
// at most once per sample bytes it has passed, so that counting costs at
// most maxRare passes over the text. When even the least met candidate is
// not sparse, the search is left to bytes.Index, which turns to comparing
// at every offset when the first byte fails it often. A search in that
// mode probes a text of at least probeText bytes once, at its start, and
// returns to a byte that has become sparse.
const (
	retune    = 64
	sparse    = 256
	sample    = 16 << 10
	probeText = 64 << 10
)

// indexMode, as needleSearch.k: the search is bytes.Index's.
const indexMode = -1

// needleSearch is one search's state: it looks for the literal in one
// text, from offsets that only grow.
type needleSearch struct {
	lit *needle
	k   int // offset in lit.b of the byte searched for, or indexMode
	// next holds where IndexByte last found lit.b[k] and, under fold, its
	// upper case: valid while not behind the offset asked for; -2 not
	// searched yet, -1 none left.
	next   [2]int
	stops  int // in vain, since from
	from   int
	probed bool
}

func (l *needle) search() needleSearch {
	return needleSearch{lit: l, k: int(l.start.Load()), next: [2]int{-2, -2}}
}

// index is the offset of the first whole literal in text[pos:], or -1.
// Every call of one search must pass the same text and a pos not before
// the one of the call before.
func (s *needleSearch) index(text []byte, pos int) int {
	b := s.lit.b
	if s.k == indexMode {
		if !s.probed && len(text)-pos >= probeText {
			s.probed = true
			s.choose(text, pos)
		}
		if s.k == indexMode {
			if i := bytes.Index(text[pos:], b); i >= 0 {
				return pos + i
			}
			return -1
		}
	}
	for pos+len(b) <= len(text) {
		c := s.nextByte(text, pos+s.k)
		start := c - s.k
		if c < 0 || start+len(b) > len(text) {
			return -1
		}
		if s.equal(text[start : start+len(b)]) {
			return start
		}
		pos = start + 1
		if s.stops++; s.stops >= retune && pos-s.from >= sample {
			if (pos-s.from)/s.stops < sparse {
				s.choose(text, pos)
				if s.k == indexMode {
					s.probed = true
					return s.index(text, pos)
				}
			}
			s.stops, s.from = 0, pos
		}
	}
	return -1
}

// choose moves to the candidate byte met least in the text ahead, or to
// indexMode when none is sparse there (never under fold: bytes.Index does
// not fold).
func (s *needleSearch) choose(text []byte, pos int) {
	ahead := text[pos:min(len(text), pos+sample)]
	best, least := s.k, -1
	for _, i := range s.lit.rare {
		c := s.lit.b[i]
		n := bytes.Count(ahead, []byte{c})
		if s.lit.fold && c >= 'a' && c <= 'z' {
			n += bytes.Count(ahead, []byte{c - 'a' + 'A'})
		}
		if least < 0 || n < least {
			best, least = i, n
		}
	}
	if !s.lit.fold && least*sparse > len(ahead) {
		best = indexMode
	}
	if best != s.k {
		s.k, s.next = best, [2]int{-2, -2}
		s.lit.start.Store(int32(best))
	}
}

// nextByte is the first offset at or after from holding lit.b[k], in
// either case under fold, or -1.
func (s *needleSearch) nextByte(text []byte, from int) int {
	c := s.lit.b[s.k]
	i := s.find(0, text, c, from)
	if !s.lit.fold || c < 'a' || c > 'z' {
		return i
	}
	if j := s.find(1, text, c-'a'+'A', from); j >= 0 && (i < 0 || j < i) {
		return j
	}
	return i
}

func (s *needleSearch) find(slot int, text []byte, c byte, from int) int {
	if at := s.next[slot]; at == -1 || at >= from {
		return at
	}
	at := bytes.IndexByte(text[from:], c)
	if at >= 0 {
		at += from
	}
	s.next[slot] = at
	return at
}

func (s *needleSearch) equal(window []byte) bool {
	if !s.lit.fold {
		return bytes.Equal(window, s.lit.b)
	}
	for i, c := range window {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s.lit.b[i] {
			return false
		}
	}
	return true
}
