package rustregex

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func FuzzCompile(f *testing.F) {
	for _, seed := range []struct{ pattern, text string }{
		{`\bfoo\b`, "a foo\nfoo-bar\nafoo"},
		{`(?i)error`, "x\nan ERROR here\n"},
		{`^[a-z&&[^aeiou]]+$`, "xay\nxyz"},
		{`\b{start}\w+\b{end}`, "é\n--\n"},
		{`(?x) [a-c--b] {2} `, "ac\nab"},
		{`\p{Greek}+|\d\s\W`, "λ\n٣ -"},
		{`a\b.|.\B\<x`, "a-\n_x"},
		{`^$`, "\n\nx\n"},
		{`(a`, ""},
		{`\n`, ""},
		{`[A-Z]{3}\d`, "ABC\nxAB1 ABC9\n"},
		{`\s+$|\d`, "a \n\xff٣\n"},
	} {
		f.Add(seed.pattern, []byte(seed.text))
	}
	f.Fuzz(func(t *testing.T, pattern string, text []byte) {
		m, err := Compile(pattern)
		if err != nil {
			var se *SyntaxError
			if !errors.Is(err, ErrLiteralNewline) && !errors.As(err, &se) {
				t.Fatalf("Compile(%q) = %T %v", pattern, err, err)
			}
			return
		}
		got, want := foundLines(m, text), matchedLines(m, text)
		if !slices.Equal(got, want) {
			t.Fatalf("Compile(%q) on %q: FindLine finds lines %v, the regexp line by line %v", pattern, text, got, want)
		}
		for _, l := range want {
			if line := text[l[0]:l[1]]; !m.Match(line) || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("Compile(%q): Match(%q) disagrees with the regexp", pattern, line)
			}
		}
	})
}

// FuzzNeedle checks the needle search, from growing offsets as scan
// calls it, against bytes.Index: case-sensitive for any literal, and
// ignoring ASCII case for an ASCII one.
func FuzzNeedle(f *testing.F) {
	f.Add([]byte("an ERROR, an Error"), "error", false)
	f.Add([]byte("if of fun func main"), "func main", false)
	f.Add([]byte("abcdefghijABCDEFGHIJ"), "FGHIJ", true)
	f.Fuzz(func(t *testing.T, text []byte, lit string, fold bool) {
		if lit == "" || fold && !isASCII(lit) {
			return
		}
		ref := text
		if fold {
			lit = strings.ToLower(lit)
			ref = asciiLower(text)
		}
		s := newNeedle([]byte(lit), fold).search()
		for pos := 0; pos <= len(text); {
			got, want := s.index(text, pos), bytes.Index(ref[pos:], []byte(lit))
			if want >= 0 {
				want += pos
			}
			if got != want {
				t.Fatalf("index(%q, %d) of %q (fold %v) = %d, want %d", text, pos, lit, fold, got, want)
			}
			if got < 0 {
				break
			}
			pos = got + 1
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func asciiLower(b []byte) []byte {
	out := bytes.Clone(b)
	for i, c := range out {
		if c >= 'A' && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return out
}
