package wordcount

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// reference counts text the obvious way, all at once.
func reference(text string) (lines, words, bytes int64) {
	lines = int64(strings.Count(text, "\n"))
	if text != "" && !strings.HasSuffix(text, "\n") {
		lines++
	}
	return lines, int64(len(strings.FieldsFunc(text, unicode.IsSpace))), int64(len(text))
}

// FuzzCounter writes valid UTF-8 in pieces of every size and compares with
// the reference: a rune split across writes must count once.
func FuzzCounter(f *testing.F) {
	for _, seed := range []string{"", "a", "one two\n", "héllo wörld", "a\u00a0b\u2003c", "😀😀 😀\n\n", "\u0085x\u3000y"} {
		f.Add(seed, uint8(1))
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, text string, step uint8) {
		if !utf8.ValidString(text) || step == 0 {
			t.Skip()
		}
		var c counter
		for rest := []byte(text); len(rest) > 0; {
			n := min(int(step), len(rest))
			if w, err := c.Write(rest[:n]); w != n || err != nil {
				t.Fatalf("Write = %d, %v", w, err)
			}
			rest = rest[n:]
		}
		l, w, b := c.counts()
		rl, rw, rb := reference(text)
		if l != rl || w != rw || b != rb {
			t.Errorf("%q in steps of %d: counts %d %d %d, want %d %d %d", text, step, l, w, b, rl, rw, rb)
		}
	})
}
