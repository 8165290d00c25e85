package rustregex

import (
	"bytes"
	"errors"
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
		wantStart, wantEnd := -1, -1
		body := bytes.TrimSuffix(text, []byte("\n"))
		if len(text) > 0 {
			off := 0
			for _, line := range bytes.Split(body, []byte("\n")) {
				if m.Match(line) {
					wantStart, wantEnd = off, off+len(line)
					break
				}
				off += len(line) + 1
			}
		}
		s, e := m.FindLine(text)
		if s != wantStart || e != wantEnd {
			t.Fatalf("Compile(%q).FindLine(%q) = %d, %d; Match line by line gives %d, %d", pattern, text, s, e, wantStart, wantEnd)
		}
		if s >= 0 && bytes.IndexByte(text[s:e], '\n') >= 0 {
			t.Fatalf("Compile(%q).FindLine(%q) reports a line holding a newline", pattern, text)
		}
	})
}

func FuzzIndexFold(f *testing.F) {
	f.Add([]byte("an ERROR, an Error"), "error")
	f.Fuzz(func(t *testing.T, text []byte, lit string) {
		if lit == "" || !isASCII(lit) {
			return
		}
		lower := bytes.ToLower([]byte(lit))
		if got, want := indexFold(text, lower), bytes.Index(asciiLower(text), lower); got != want {
			t.Fatalf("indexFold(%q, %q) = %d, want %d", text, lower, got, want)
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
