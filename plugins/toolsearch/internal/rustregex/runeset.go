package rustregex

import (
	"sort"
	"sync"
	"unicode"
)

// runeSet is a set of code points kept as sorted, disjoint, non-adjacent
// inclusive pairs lo0, hi0, lo1, hi1, ... The class algebra of Rust's regex
// (unions, &&, --, ~~, negation, case folding) is computed on it, so that Go
// only ever sees one flat class.
type runeSet []rune

// set builds a runeSet from pairs in any order.
func set(pairs ...rune) runeSet {
	var s runeSet
	for i := 0; i+1 < len(pairs); i += 2 {
		s = s.union(runeSet{pairs[i], pairs[i+1]})
	}
	return s
}

func fromTable(t *unicode.RangeTable) runeSet {
	var s runeSet
	for _, r := range t.R16 {
		s = appendStride(s, rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	for _, r := range t.R32 {
		s = appendStride(s, rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	return s.normalize()
}

func appendStride(s runeSet, lo, hi, stride rune) runeSet {
	if stride == 1 {
		return append(s, lo, hi)
	}
	for r := lo; r <= hi; r += stride {
		s = append(s, r, r)
	}
	return s
}

// normalize sorts the pairs and merges overlapping or adjacent ones.
func (s runeSet) normalize() runeSet {
	n := len(s) / 2
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return s[2*idx[a]] < s[2*idx[b]] })
	out := make(runeSet, 0, len(s))
	for _, i := range idx {
		lo, hi := s[2*i], s[2*i+1]
		if k := len(out); k > 0 && lo <= out[k-1]+1 {
			if hi > out[k-1] {
				out[k-1] = hi
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

func (s runeSet) union(t runeSet) runeSet {
	out := make(runeSet, 0, len(s)+len(t))
	return append(append(out, s...), t...).normalize()
}

func (s runeSet) negate() runeSet {
	var out runeSet
	next := rune(0)
	for i := 0; i < len(s); i += 2 {
		if s[i] > next {
			out = append(out, next, s[i]-1)
		}
		next = s[i+1] + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, next, unicode.MaxRune)
	}
	return out
}

func (s runeSet) intersect(t runeSet) runeSet { return s.negate().union(t.negate()).negate() }
func (s runeSet) minus(t runeSet) runeSet     { return s.intersect(t.negate()) }
func (s runeSet) symdiff(t runeSet) runeSet   { return s.minus(t).union(t.minus(s)) }

// single reports whether s holds exactly the one code point r.
func (s runeSet) single(r rune) bool { return len(s) == 2 && s[0] == r && s[1] == r }

// subsetOf reports whether every member of s is in t.
func (s runeSet) subsetOf(t runeSet) bool {
	for i := 0; i < len(s); i += 2 {
		j := sort.Search(len(t)/2, func(j int) bool { return t[2*j+1] >= s[i] })
		if j == len(t)/2 || t[2*j] > s[i] || t[2*j+1] < s[i+1] {
			return false
		}
	}
	return true
}

// disjoint reports whether s and t share no member.
func (s runeSet) disjoint(t runeSet) bool {
	for i, j := 0, 0; i < len(s) && j < len(t); {
		switch {
		case s[i+1] < t[j]:
			i += 2
		case t[j+1] < s[i]:
			j += 2
		default:
			return false
		}
	}
	return true
}

// fold closes s under Unicode simple case folding, as Rust's (?i) does for a
// class (and as Go's (?i) does for literals).
func (s runeSet) fold() runeSet {
	tables := loadTables()
	var add runeSet
	f := s.intersect(tables.foldable)
	for i := 0; i < len(f); i += 2 {
		for r := f[i]; r <= f[i+1]; r++ {
			for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
				add = append(add, o, o)
			}
		}
	}
	if len(add) == 0 {
		return s
	}
	return s.union(add)
}

// foldOrbit is the set of r and every code point it folds to.
func foldOrbit(r rune) runeSet {
	s := runeSet{r, r}
	for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
		s = append(s, o, o)
	}
	return s.normalize()
}

// tables holds the sets every pattern may need, built once.
type tables struct {
	word, digit, space runeSet // Unicode \w, \d, \s as Rust defines them
	asciiWord          runeSet // [0-9A-Za-z_]: what Go's \b calls a word character
	foldable           runeSet // code points whose simple fold orbit is not just themselves
	assigned           runeSet
	alphabetic         runeSet
}

var (
	tablesOnce sync.Once
	tablesVal  *tables
)

func loadTables() *tables {
	tablesOnce.Do(func() {
		t := &tables{}
		t.alphabetic = fromTable(unicode.L).union(fromTable(unicode.Nl)).union(fromTable(unicode.Other_Alphabetic))
		t.word = t.alphabetic.union(fromTable(unicode.M)).union(fromTable(unicode.Nd)).
			union(fromTable(unicode.Pc)).union(fromTable(unicode.Join_Control))
		t.digit = fromTable(unicode.Nd)
		t.space = fromTable(unicode.White_Space)
		t.asciiWord = set('0', '9', 'A', 'Z', 'a', 'z', '_', '_')
		var f runeSet
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if unicode.SimpleFold(r) != r {
				f = append(f, r, r)
			}
			if r > 0x1F000 {
				break // no case mappings beyond Adlam (U+1E900 block)
			}
		}
		t.foldable = f.normalize()
		t.assigned = fromTable(unicode.Cn).negate()
		tablesVal = t
	})
	return tablesVal
}
