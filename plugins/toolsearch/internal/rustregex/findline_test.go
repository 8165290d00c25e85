package rustregex

import (
	"bytes"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// matchedLines is the oracle for FindLine: the [start,end) bounds of each
// line of text the translated regexp matches, tried one line at a time.
func matchedLines(m *Matcher, text []byte) [][2]int {
	var out [][2]int
	if len(text) == 0 {
		return out
	}
	off := 0
	for _, line := range bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n")) {
		if m.re.Match(line) {
			out = append(out, [2]int{off, off + len(line)})
		}
		off += len(line) + 1
	}
	return out
}

// foundLines calls FindLine as grep does, from after each line it reports.
func foundLines(m *Matcher, text []byte) [][2]int {
	var out [][2]int
	for off := 0; off < len(text); {
		s, e := m.FindLine(text[off:])
		if s < 0 {
			break
		}
		out = append(out, [2]int{off + s, off + e})
		off += e + 1
	}
	return out
}

// diffPatterns exercise every way FindLine searches: a literal, bytes
// that begin a match (from the line's first one, or the whole line when
// an assertion looks behind), bytes of an inner element, and chunks.
var diffPatterns = []string{
	`\d`, `[0-9]`, `[A-Z]{3}\d`, `\w+`, `[0-9]{4}-[0-9]{2}`, `\s\S`, `\D\d`,
	`\p{Greek}`, `[^a-z]`, `.`, `.{3}`, `\W`, `(?i)k\d`, `(?i)[ſs]\d`, `\x{FFFD}`,
	`[é-ü]x?`, `λ|\d`, `x*\d`, `(?:ab|\d)+c?`, `\d?[αβ]`, `[\x{10000}-\x{10FFFF}]`,
	`[\x{D7FF}-\x{E001}]`, `[^\x00-\x7F]`, `\bk\d`, `\d\b`, `\B\d`, `^\d`, `\d$`,
	`^[A-Z]`, `\<\w`, `\w\>`, `(?:^|x)\d`, `\s+$`, `^$`, `$`, `\b`, `\d*`, `x?`,
	`\b\w+\b`, `a\d|b\s`, `(?m:^)\w{2}\d`, `[[:upper:]][[:digit:]]`,
	`[\x{1F600}-\x{1F64F}]`, `\w[\x{1F600}-\x{1F64F}]`,
}

// diffPieces are the fragments random texts are made of: ASCII of each
// kind, multi-byte letters and digits, fold partners, invalid UTF-8.
var diffPieces = []string{
	"a", "b", "c", "k", "x", "s", "A", "K", "Z", "0", "7", "-", "_", " ", "\t",
	"\n", "\n", "\n", "\r", "é", "ü", "λ", "β", "٣", "\u212a", "ſ", "𝟎", "\U0001F600",
	"\xff", "\x80", "\xed\xa0\x80", "\xef\xbf\xbd", "ab", "2024-05", "KKK1",
}

func randomText(r *rand.Rand) []byte {
	var b []byte
	for n := r.IntN(40); n > 0; n-- {
		b = append(b, diffPieces[r.IntN(len(diffPieces))]...)
	}
	return b
}

func TestFindLineAgainstRegexp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range diffPatterns {
		m, err := Compile(p)
		if err != nil {
			t.Fatalf("Compile(%q): %v", p, err)
		}
		for range 3000 {
			text := randomText(r)
			if got, want := foundLines(m, text), matchedLines(m, text); !slices.Equal(got, want) {
				t.Fatalf("Compile(%q) on %q: FindLine finds lines %v, the regexp line by line %v", p, text, got, want)
			}
		}
	}
}

// TestFindLineSkims checks that the patterns without a literal that the
// benchmarks measure take the path that skips lines.
func TestFindLineSkims(t *testing.T) {
	for _, c := range []struct {
		pattern string
		fromHit bool
	}{
		{`\d`, true},
		{`[0-9]`, true},
		{`[A-Z]{3}\d`, false}, // \d is rarer than [A-Z]
		{`\w+`, true},
		{`\s+$`, true},
		{`^[A-Z]`, false},
		{`\d\b`, true}, // \b at the end consumes the character after the match
	} {
		m, err := Compile(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if m.lit != nil || m.hits == nil || m.fromHit != c.fromHit {
			t.Errorf("Compile(%q): literal %v, bytes %v, from the first %v; want bytes, from the first %v", c.pattern, m.lit, m.hits != nil, m.fromHit, c.fromHit)
		}
	}
	for p, want := range map[string]bool{`\d`: true, `\w+`: true, `[0-9]{1,3}`: true, `\d{2}`: false, `[A-Z]{3}\d`: false, `(\w)`: true} {
		if m, _ := Compile(p); m.sure != want {
			t.Errorf("Compile(%q): one class %v, want %v", p, m.sure, want)
		}
	}
	if m, _ := Compile(`[\x{1F600}-\x{1F64F}]`); m.one != 0xF0 {
		t.Errorf("Compile(emoji range): the only candidate byte is %#x, want 0xf0", m.one)
	}
	for _, p := range []string{`^$`, `\d*`, `x?`} {
		if m, _ := Compile(p); m.hits != nil {
			t.Errorf("Compile(%q) skims, but it can match the empty string", p)
		}
	}
}

func TestLeads(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    string // the bytes, each as a string of one byte
		empty   bool
	}{
		{`[0-9]`, "0123456789", false},
		{`é|λ`, "\xc3\xce", false},
		{`(?i)k`, "Kk\xe2", false}, // U+212A KELVIN SIGN
		{`[\x{D7FF}-\x{E000}]`, "\xed\xee", false},
		{`x*y?z`, "xyz", false},
		{`x*y?`, "xy", true},
		{`^$`, "", true},
	} {
		tree := mustParse(t, c.pattern)
		set, empty := leads(tree)
		var got []byte
		for b, in := range set {
			if in != 0 {
				got = append(got, byte(b))
			}
		}
		if string(got) != sortedBytes(c.want) || empty != c.empty {
			t.Errorf("leads(%q) = %q, %v, want %q, %v", c.pattern, got, empty, sortedBytes(c.want), c.empty)
		}
	}
	set, _ := leads(mustParse(t, `[^a]`))
	for b := 0x80; b < 0x100; b++ {
		if set[b] == 0 {
			t.Errorf("leads([^a]) lacks %#x, which Go reads as U+FFFD", b)
		}
	}
}

func mustParse(t *testing.T, pattern string) *syntax.Regexp {
	t.Helper()
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	return re
}

func sortedBytes(s string) string {
	b := []byte(s)
	slices.Sort(b)
	return string(b)
}

// TestNeedleMovesToARareByte: "func main" ranks 'f' rarest, but in the
// first text 'f' starts every word; the search must move to 'm', which the
// text does not hold, and still find the one match at the end. Where every
// candidate is common (the second text), it leaves the search to
// bytes.Index, and the next search over a text with a rare candidate (the
// third) moves back to it.
func TestNeedleMovesToARareByte(t *testing.T) {
	const indexMode = 0
	dense := strings.Repeat("func mai, ", 2000)
	for _, c := range []struct {
		lit  string
		fold bool
		// texts are searched in turn by one needle; want is the byte the
		// last search ends on.
		texts []string
		want  byte
	}{
		{"func main", false, []string{strings.Repeat("if of fun func ", 3000)}, 'm'},
		{"func main", true, []string{strings.Repeat("IF OF FUN FUNC ", 3000)}, 'm'},
		{"func main", false, []string{dense}, indexMode},
		{"func main", false, []string{dense, strings.Repeat("if of fun func ", 6000)}, 'm'},
		{"func main", true, []string{dense}, 'f'},
	} {
		l := newNeedle([]byte(c.lit), c.fold)
		var s needleSearch
		for _, text := range c.texts {
			text += "func main"
			s = l.search()
			if got, want := s.index([]byte(text), 0), len(text)-len(c.lit); got != want {
				t.Errorf("index of %q (fold %v) = %d, want %d", c.lit, c.fold, got, want)
			}
		}
		got := byte(indexMode)
		if s.k >= 0 {
			got = l.b[s.k]
		}
		if got != c.want {
			t.Errorf("search for %q (fold %v) over %d texts ended looking for %q, want %q", c.lit, c.fold, len(c.texts), got, c.want)
		}
	}
}
