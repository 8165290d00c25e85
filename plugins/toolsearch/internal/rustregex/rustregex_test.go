package rustregex

import (
	"errors"
	"strings"
	"testing"
)

// matchCases are (pattern, line, whether rg 14.1.1 reports the line).
var matchCases = []struct {
	pattern, line string
	want          bool
}{
	// S-038 examples.
	{`\d`, "٣", true},
	{`^\w$`, "é", true},
	{`(?x) b a z`, "baz", true},
	{`^[a-z&&[^aeiou]]+$`, "xyz", true},
	{`^[a-z&&[^aeiou]]+$`, "xay", false},
	{`--flag`, "use --flag here", true},
	{`-n`, "a -n b", true},

	// Unicode \d \w \s and their negations; POSIX classes stay ASCII.
	{`^\d+$`, "١٢٣", true},
	{`^\D$`, "٣", false},
	{`^\w+$`, "naïve_κόσμος", true},
	{`^\w$`, "Ⅻ", true},      // Nl is Alphabetic
	{`^\w$`, "\u200d", true}, // Join_Control
	{`^\w$`, "-", false},
	{`^\W$`, "é", false},
	{`^\W$`, "-", true},
	{`^\s$`, "\u00a0", true},
	{`^\s$`, "\u3000", true},
	{`^\S$`, "\u2003", false},
	{`^[[:alpha:]]$`, "é", false},
	{`^[[:alpha:]]$`, "e", true},
	{`^[[:^digit:]]$`, "٣", true},
	{`^[[:word:]]+$`, "a_1", true},

	// \b and \B, and the word-start/end forms.
	{`\bé`, "x é", true},
	{`\bé`, "xé", false},
	{`é\b`, "é x", true},
	{`é\b`, "éx", false},
	{`\bfoo\b`, "a foo b", true},
	{`\bfoo\b`, "foo", true},
	{`\bfoo\b`, "afoo", false},
	{`\bfoo\b`, "fooé", false},
	{`\bfoo\b`, "éfoo", false},
	{`\bfoo\b`, "foo-bar", true},
	{`\Bfoo`, "afoo", true},
	{`\Bfoo`, "a foo", false},
	{`\Boo\B`, "foob", true},
	{`\b-`, "a-", true},
	{`\b-`, " -", false},
	{`\b`, "a", true},
	{`\b`, " - ", false},
	{`\B`, " ", true},
	{`\B`, "a", false},
	{`^\b$`, "", false},
	{`a\bb`, "ab", false},
	{`a\b b`, "a b", true},
	{`a\B b`, "a b", false},
	{`foo\b.`, "foo bar", true},
	{`foo\b.`, "fooé", false},
	{`.\bfoo`, "éfoo", false},
	{`.\bfoo`, "-foo", true},
	{`[éa]\Bx`, "éx", true},
	{`a\b\b-`, "a-", true},
	{`x\b\S+`, "xé", false},
	{`.\<.`, "-é", true},
	{`(?:.)?\<.`, "--", false},
	{`(?:.)?\<.`, "é", true},
	{`.\<.`, "aé", false},
	{`\S\b\S`, "é-", true},
	{`\S\b\S`, "éa", false},
	{`\S+\B\S{2}`, "-é", false},
	{`\S+\B\S{2}`, "--a", true},
	{`\S+\B\S{2}`, "--é-", true},
	{`\S+\B\S{2}`, "ééé", true},
	{`x\b\S+`, "x-", true},
	{`\S+\bx`, "éx", false},
	{`\S{2,3}\bx`, "--x", true},
	{`\S{2,3}\bx`, "-éx", false},
	{`a\b\B-`, "a-", false},
	{`(?i)\bK`, "é\u212a", false},
	{`^\bfoo`, "foo", true},
	{`\<\w+\>`, "((é))", true},
	{`\<\w+\>`, "--", false},
	{`x\bé`, "xé", false},
	{`\<foo\>`, "a foo b", true},
	{`\<foo\>`, "afoo", false},
	{`\<é`, "x é", true},
	{`\<-`, " -", false},
	{`é\>`, "é.", true},
	{`é\>`, "éa", false},
	{`\b{start}foo\b{end}`, "(foo)", true},
	{`\b{start}foo`, "_foo", false},
	{`\b{start-half}-`, " -", true},
	{`\b{start-half}-`, "a-", false},
	{`-\b{end-half}`, "- ", true},
	{`-\b{end-half}`, "-a", false},
	{`\bfoo|bar\b`, "xbar", true},
	{`\bfoo|bar\b`, "xfoo", false},
	{`(?:\bé|x)`, "aé", false},
	{`(?:\bé|x)`, " é", true},

	// Verbose mode, flags.
	{`(?x) a\ b`, "a b", true},
	{`(?x)a[\ ]b`, "a b", true},
	{`(?x)a[b c]`, "a ", false}, // Rust skips verbose whitespace inside classes too
	{`(?x)a{ 2 , 3 }`, "aa", true},
	{`(?u)\w`, "é", true},
	{`(?i)straße`, "STRAßE", true},
	{`(?i)k`, "\u212a", true},
	{`(?i)[^k]`, "K", false},
	{`(?i)\p{Lu}`, "a", true},
	{`(?i:a)b`, "AB", false},
	{`a(?i)b|c`, "C", true},
	{`foo`, "FOO", false},
	{`(?s).`, "x", true},

	// Class set operations and nesting.
	{`[a[bc]]`, "c", true},
	{`[a[bc]]`, "[", false},
	{`^[\w--\d]+$`, "ab", true},
	{`^[\w--\d]+$`, "a1", false},
	{`^[a-c~~b-d]+$`, "ad", true},
	{`^[a-c~~b-d]+$`, "b", false},
	{`[^\d&&\p{Nd}]`, "5", false},
	{`[]a]`, "]", true},
	{`[a-]`, "-", true},
	{`[-a]`, "-", true},
	{`[\[\]]`, "]", true},
	{`[[:alpha:]--[aeiou]]`, "a", false},

	// Unicode properties.
	{`\p{Alphabetic}`, "é", true},
	{`\p{White_Space}`, "\u2028", true},
	{`\p{Letter}`, "ß", true},
	{`\p{L}`, "1", false},
	{`\pL`, "x", true},
	{`\p{Lu}`, "a", false},
	{`\p{Uppercase_Letter}`, "A", true},
	{`\p{sc=Greek}`, "λ", true},
	{`\p{Script=Greek}`, "l", false},
	{`\p{gc=Lu}`, "Ä", true},
	{`\p{Greek}`, "Ω", true},
	{`\p{Grek}`, "Ω", true},
	{`\P{Greek}`, "Ω", false},
	{`\p{greek}`, "Ω", true},
	{`\p{Decimal_Number}`, "٣", true},
	{`\p{Any}`, "x", true},
	{`\p{Assigned}`, "\u0378", false},
	{`\p{Cn}`, "\u0378", true},
	{`\p{Unassigned}`, "a", false},
	{`\p{Other}`, "\u0378", true},
	{`\PC`, "\u0378", false},
	{`\p{sc!=Greek}`, "a", true},
	{`\p{IsGreek}`, "Ω", true},
	{`\p{Lower}`, "ª", true}, // the Lowercase property (Other_Lowercase), not Ll
	{`\p{Ll}`, "ª", false},
	{`\p{wspace}`, "\u0085", true},
	{`\p{Hex}`, "F", true},
	{`\p{punct}`, "!", true},

	// Line model (S-037): $ does not match before \r.
	{`foo$`, "foo\r", false},
	{`foo\r$`, "foo\r", true},
	{`^foo`, "foo", true},
	{`\Afoo\z`, "foo", true},
	{`.`, "\r", true},
	{`^$`, "", true},
	{`[^a]`, "", false},
	{`\W`, "", false},
	{`x*`, "", true},

	// Escapes.
	{`\x41`, "A", true},
	{`\u{1F600}`, "😀", true},
	{`\u00e9`, "é", true},
	{`\t`, "a\tb", true},
	{`\.`, "a.b", true},
	{`\.`, "ab", false},
	{`a\-b`, "a-b", true},
	{`\~`, "~", true},
	{`a{2}`, "aa", true},
	{`a{ 2 }`, "aa", true},
	{`^a{2,3}$`, "aaaa", false},
	{`a**`, "", true},
	{`(?P<n>a)(?<m>b)`, "ab", true},
	{`x|\n`, "x", true}, // Rust makes a class of x|\n, and rg's newline rule strips a class
	{`x|\n`, "", false},
	{`a\n{0}b`, "ab", true},
}

func TestMatch(t *testing.T) {
	for _, c := range matchCases {
		m, err := Compile(c.pattern)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.pattern, err)
			continue
		}
		if got := m.Match([]byte(c.line)); got != c.want {
			t.Errorf("Compile(%q).Match(%q) = %v, want %v", c.pattern, c.line, got, c.want)
		}
		// The same line inside a buffer must be found, and only it.
		buf := "\n\n" + c.line + "\n"
		wantStart, wantEnd := -1, -1
		switch {
		case m.Match(nil): // the empty first line matches
			wantStart, wantEnd = 0, 0
		case c.want:
			wantStart, wantEnd = 2, 2+len(c.line)
		}
		if s, e := m.FindLine([]byte(buf)); s != wantStart || e != wantEnd {
			t.Errorf("Compile(%q).FindLine(%q) = %d, %d, want %d, %d", c.pattern, buf, s, e, wantStart, wantEnd)
		}
	}
}

func TestLiteralNewline(t *testing.T) {
	for _, p := range []string{`\n`, `a\nb`, "a\nb", `\x0A`, `\x{a}`, `\u{A}`, `\u000A`, `\U0000000A`, `[\n]`, `(?i)\n`, `ab|\n`, `(?i)a|\n`, `\n|[\n]`, `[^\x00-\x09\x0B-\x{10FFFF}]`, `(\n)+`} {
		_, err := Compile(p)
		if !errors.Is(err, ErrLiteralNewline) {
			t.Errorf("Compile(%q) = %v, want ErrLiteralNewline", p, err)
		}
	}
	if got, want := ErrLiteralNewline.Error(), `the literal "\n" is not allowed in a regex`; got != want {
		t.Errorf("ErrLiteralNewline = %q, want %q", got, want)
	}
	// A class holding other characters only loses '\n'.
	for _, p := range []string{`x|\n`, `(?:\r|\n)+`, `[a\n]`, `[^a]`, `\s`, `(?s).`, `\W`, `\D`, `\P{L}`, `[\n-\r]`} {
		m, err := Compile(p)
		if err != nil {
			t.Errorf("Compile(%q): %v", p, err)
			continue
		}
		if s, e := m.FindLine([]byte("a\n\nb")); s >= 0 && strings.Contains("a\n\nb"[s:e], "\n") {
			t.Errorf("Compile(%q).FindLine spans a newline: %d, %d", p, s, e)
		}
		if m.re.MatchString("\n") {
			t.Errorf("Compile(%q) matches a lone newline", p)
		}
	}
}

func TestSyntaxError(t *testing.T) {
	cases := []struct{ pattern, text string }{
		{`(a`, "regex parse error:\n    (?:(a)\n    ^\nerror: unclosed group"},
		{`x{,3}`, "regex parse error:\n    (?:x{,3})\n         ^\nerror: repetition quantifier expects a valid decimal"},
		{`[a`, "regex parse error:\n    (?:[a)\n       ^\nerror: unclosed character class"},
		{`a{3,2}`, "regex parse error:\n    (?:a{3,2})\n        ^^^^^\nerror: invalid repetition count range, the start must be <= the end"},
		{`(?=a)`, "regex parse error:\n    (?:(?=a))\n       ^^^\nerror: look-around, including look-ahead and look-behind, is not supported"},
		{`\1`, "regex parse error:\n    (?:\\1)\n       ^^\nerror: backreferences are not supported"},
		{`\Qa\E`, "regex parse error:\n    (?:\\Qa\\E)\n       ^^\nerror: unrecognized escape sequence"},
		// A pattern over 1,024 bytes is cut there; the carets show only
		// where the span is in what is kept.
		{"(" + strings.Repeat("b", 2000), "regex parse error:\n    (?:(" + strings.Repeat("b", 1023) + "…(977 bytes more))\n    ^\nerror: unclosed group"},
		{strings.Repeat("a", 2000) + "{3,2}", "regex parse error:\n    (?:" + strings.Repeat("a", 1024) + "…(981 bytes more))\nerror: invalid repetition count range, the start must be <= the end"},
	}
	for _, c := range cases {
		_, err := Compile(c.pattern)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Compile(%q) = %v, want *SyntaxError", c.pattern, err)
			continue
		}
		if se.Pattern != c.pattern || se.Error() != c.text {
			t.Errorf("Compile(%q) error:\n%s\nwant:\n%s", c.pattern, se.Error(), c.text)
		}
	}
}

func TestSyntaxErrorReason(t *testing.T) {
	cases := []struct{ pattern, reason string }{
		{`a)`, "unopened group"},
		{`(?!a)`, "look-around, including look-ahead and look-behind, is not supported"},
		{`(?<=a)b`, "look-around, including look-ahead and look-behind, is not supported"},
		{`(?<!a)b`, "look-around, including look-ahead and look-behind, is not supported"},
		{`(a)\1`, "backreferences are not supported"},
		{`\0`, "backreferences are not supported"},
		{`\123`, "backreferences are not supported"},
		{`\9`, "backreferences are not supported"},
		{`\k<name>`, "unrecognized escape sequence"},
		{`\h`, "unrecognized escape sequence"},
		{`\C`, "unrecognized escape sequence"},
		{`\e`, "unrecognized escape sequence"},
		{`\é`, "unrecognized escape sequence"},
		{`x{1001}`, reasonRepeatTooBig},
		{`x{2,5000}`, reasonRepeatTooBig},
		{`(?:a{100}){100}`, reasonRepeatTooBig},
		{`x{99999999999}`, "decimal literal invalid"},
		{`x{a}`, "repetition quantifier expects a valid decimal"},
		{`x{2`, "unclosed counted repetition"},
		{`*a`, "repetition operator missing expression"},
		{`a|*`, "repetition operator missing expression"},
		{`(?i)*`, "repetition operator missing expression"},
		{`(?)`, "repetition operator missing expression"},
		{`{2}`, "repetition operator missing expression"},
		{`${foo}`, "repetition quantifier expects a valid decimal"},
		{`(?z)`, "unrecognized flag"},
		{`(?ii)`, "duplicate flag"},
		{`(?i-i)a`, "duplicate flag"},
		{`(?x) a # trailing comment`, "unclosed group"}, // the comment swallows the ")" rg wraps the pattern in
		{`(?x)a[ ]b`, "unclosed character class"},       // so does verbose whitespace inside a class
		{`(?i-)`, "dangling flag negation operator"},
		{`(?--i)`, "flag negation operator repeated"},
		{`(?-u)a`, reasonNoUnicode},
		{`(?R)a`, reasonCRLF},
		{`(?P<>a)`, "empty capture group name"},
		{`(?P<1>a)`, "invalid capture group character"},
		{`(?P<n>a)(?P<n>b)`, "duplicate capture group name"},
		{`(?P=n)`, "unrecognized flag"},
		{`[z-a]`, "invalid character class range, the start must be <= the end"},
		{`[a-\d]`, "invalid range boundary, must be a literal"},
		{`[\b]`, "invalid escape sequence found in character class"},
		{`\x{110000}`, "hexadecimal literal is not a Unicode scalar value"},
		{`\x{}`, "hexadecimal literal empty"},
		{`\xZZ`, "invalid hexadecimal digit"},
		{`\p{Nope}`, "Unicode property not found"},
		{`\p{sc=Nope}`, "Unicode property value not found"},
		{`\p{Emoji}`, "Unicode property not supported by this search (it has no Go table)"},
		{`\p\d`, "invalid Unicode character class"},
		{`\b{foo}`, "unrecognized special word boundary assertion, valid choices are: start, end, start-half or end-half"},
		{`\b{start`, "special word boundary assertion is either unclosed or contains an invalid character"},
		{`(?:ab|.)\<.`, reasonWordAssertion},
		{`\p{Nope}(`, "unclosed group"}, // rg parses the whole pattern before it looks properties up
		{`x{2000}[`, "unclosed character class"},
		{strings.Repeat("(", 300), "exceed the maximum number of nested parentheses/brackets (250)"},
	}
	for _, c := range cases {
		_, err := Compile(c.pattern)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Compile(%q) = %v, want *SyntaxError", c.pattern, err)
			continue
		}
		if !strings.HasPrefix(se.Error(), "regex parse error:\n    (?:"+c.pattern+")\n") || !strings.HasSuffix(se.Error(), "\nerror: "+c.reason) {
			t.Errorf("Compile(%q) error:\n%s\nwant reason %q", c.pattern, se.Error(), c.reason)
		}
	}
}

// Patterns rg accepts that Go reads differently must still compile here.
func TestAccepted(t *testing.T) {
	for _, p := range []string{`a)(b`, `\b{2}`, `^*`, `(?U)a+`, `(?m)^a`, `(?s:.)`, `(?-x)a`, `[[:foo:]]`, `[&&]`, `x{2,}?`, "", `(?:)`, `()`, `a|`} {
		if _, err := Compile(p); err != nil {
			t.Errorf("Compile(%q): %v", p, err)
		}
	}
}

func TestFindLine(t *testing.T) {
	text := "alpha\nbeta gamma\r\n\nfoo bar\nlast foo"
	cases := []struct {
		pattern  string
		want     string
		notFound bool
	}{
		{pattern: `foo`, want: "foo bar"},
		{pattern: `gamma\r`, want: "beta gamma\r"},
		{pattern: `gamma$`, notFound: true},
		{pattern: `^$`, want: ""},
		{pattern: `last \w+$`, want: "last foo"},
		{pattern: `(?i)BETA`, want: "beta gamma\r"},
		{pattern: `(?i)zzz`, notFound: true},
		{pattern: `\bbar\b`, want: "foo bar"},
		{pattern: `o\s+b`, want: "foo bar"},
		{pattern: `nothing`, notFound: true},
	}
	for _, c := range cases {
		m, err := Compile(c.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.pattern, err)
		}
		s, e := m.FindLine([]byte(text))
		if c.notFound {
			if s != -1 || e != -1 {
				t.Errorf("FindLine(%q) = %q, want none", c.pattern, text[s:e])
			}
			continue
		}
		if s < 0 || text[s:e] != c.want {
			t.Errorf("FindLine(%q) = %d, %d, want %q", c.pattern, s, e, c.want)
		}
	}
	m, _ := Compile(`^$`)
	if s, e := m.FindLine([]byte("a\n")); s != -1 || e != -1 {
		t.Errorf("FindLine(^$) found a line after the last terminator: %d, %d", s, e)
	}
	if s, e := m.FindLine(nil); s != -1 || e != -1 {
		t.Errorf("FindLine(^$, nil) = %d, %d", s, e)
	}
	if s, e := m.FindLine([]byte("\n")); s != 0 || e != 0 {
		t.Errorf("FindLine(^$, one empty line) = %d, %d, want 0, 0", s, e)
	}
	if s, e := m.FindLine([]byte("a\n\n")); s != 2 || e != 2 {
		t.Errorf("FindLine(^$, a and an empty line) = %d, %d, want 2, 2", s, e)
	}
}

func TestFindLineNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool, which regexp relies on, drop entries")
	}
	buf := []byte(benchSource(64 << 10))
	for _, p := range []string{`func main`, `func \(\w+ \*\w+\) Close\(`, `(?i)error`, `\d+\s*\)$`, `[A-Z]{3}\d`, `\w{30}`, `^$`} {
		m, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(20, func() { m.FindLine(buf) }); n != 0 {
			t.Errorf("FindLine(%q) allocates %v times per call", p, n)
		}
	}
}

func TestRuneSet(t *testing.T) {
	a, b := set('a', 'f', 'x', 'z'), set('c', 'd', 'y', 'y')
	if !b.subsetOf(a) || a.subsetOf(b) || !set().subsetOf(a) || set('e', 'x').subsetOf(a) {
		t.Error("subsetOf")
	}
	if a.disjoint(b) || !set('g', 'w').disjoint(a) || !set().disjoint(a) || set('f', 'f').disjoint(a) {
		t.Error("disjoint")
	}
	if got := a.minus(b); !equalSets(got, set('a', 'b', 'e', 'f', 'x', 'x', 'z', 'z')) {
		t.Errorf("minus = %q", got)
	}
	if got := a.symdiff(set('e', 'h')); !equalSets(got, set('a', 'd', 'g', 'h', 'x', 'z')) {
		t.Errorf("symdiff = %q", got)
	}
	if got := set('k', 'k').fold(); !equalSets(got, set('K', 'K', 'k', 'k', 0x212A, 0x212A)) {
		t.Errorf("fold = %q", got)
	}
}

func equalSets(a, b runeSet) bool { return a.subsetOf(b) && b.subsetOf(a) }
