package rustregex

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// benchSource is about n bytes of Go source whose only match of the
// benchmark patterns is its last line.
func benchSource(n int) string {
	lines := []string{
		"package store",
		"",
		"import (\"context\"; \"sync\")",
		"",
		"// Get returns the value stored for key, and whether there is one.",
		"func (s *Store) Get(ctx context.Context, key string) ([]byte, bool) {",
		"\ts.mu.RLock()",
		"\tdefer s.mu.RUnlock()",
		"\tv, ok := s.items[key]",
		"\treturn v, ok",
		"}",
		"",
	}
	block := strings.Join(lines, "\n") + "\n"
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(block)
	}
	b.WriteString("func (c *Conn) Close() ERROR { return nil } // func main\n")
	return b.String()
}

func BenchmarkFindLine(b *testing.B) {
	buf := []byte(benchSource(1 << 20))
	for _, bc := range []struct{ name, pattern string }{
		{"literal", `func main`},
		{"regex", `func \(\w+ \*\w+\) Close\(`},
		{"fold", `(?i)error`},
		{"noliteral", `[A-Z]{5}\s\S`}, // no literal to look for: the regexp runs over the buffer
	} {
		m, err := Compile(bc.pattern)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				if s, _ := m.FindLine(buf); s < 0 {
					b.Fatal("no match")
				}
			}
		})
	}
}

// benchProse is about n bytes of English prose with a digit on one line
// in about fifty and a date on one line in about five hundred.
func benchProse(n int) string {
	words := strings.Fields(`the quick reader turns each page slowly while the
		old house settles into evening and someone downstairs hums a tune that
		nobody else remembers from the summer they spent by the lake waiting for
		letters which never came because the road had washed away in spring`)
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		for j := range 12 {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[(i*7+j*5)%len(words)])
		}
		switch {
		case i%500 == 499:
			b.WriteString(" on 2024-05-17")
		case i%50 == 49:
			b.WriteString(" for 3 days")
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// benchGo is about n bytes of Go source with digits, upper-case names and
// a date here and there, as grep meets it.
func benchGo(n int) string {
	block := `// Copyright 2024-01 The Authors. All rights reserved.

package cache

import (
	"errors"
	"time"
)

// ErrFull is returned by Put when the cache holds MaxItems entries.
var ErrFull = errors.New("cache: full")

const MaxItems = 4096

type entry struct {
	key     string
	value   []byte
	expires time.Time
}

// Put stores value under key for ttl, evicting the oldest entry first.
func (c *Cache) Put(key string, value []byte, ttl time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) >= MaxItems && !c.evict() {
		return ErrFull
	}
	c.items[key] = &entry{key: key, value: value, expires: c.now().Add(ttl)}
	return nil
}

`
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(block)
	}
	return b.String()
}

// BenchmarkFindLineNoLiteral reports every matching line, as grep does,
// for patterns without a literal to look for.
func BenchmarkFindLineNoLiteral(b *testing.B) {
	for _, text := range []struct{ name, text string }{
		{"go", benchGo(1 << 20)},
		{"prose", benchProse(1 << 20)},
	} {
		buf := []byte(text.text)
		for _, p := range []struct{ name, pattern string }{
			{"digit", `\d`},
			{"upper3digit", `[A-Z]{3}\d`},
			{"word", `\w+`},
			{"date", `[0-9]{4}-[0-9]{2}`},
			{"ascii09", `[0-9]`},
			{"longword", `\w{30}`}, // most lines have candidates, none matches
			{"longline", `.{100}`},
		} {
			m, err := Compile(p.pattern)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(text.name+"/"+p.name, func(b *testing.B) {
				b.SetBytes(int64(len(buf)))
				b.ReportAllocs()
				for b.Loop() {
					for off := 0; off < len(buf); {
						s, e := m.FindLine(buf[off:])
						if s < 0 {
							break
						}
						off += e + 1
					}
				}
			})
		}
	}
}

// BenchmarkNeedle looks for a literal that ends each 1 MiB text, beside
// bytes.Index: in Go source, in numbered lines padded with the letters a
// to j (the 1 GiB file of the tools' benchmark; "func main"'s first byte
// is on every line, its 'm' on none), and in lines where every byte of
// "needle" is common.
func BenchmarkNeedle(b *testing.B) {
	numbered := func(n int) string {
		var s strings.Builder
		for i := 0; s.Len() < n; i++ {
			fmt.Fprintf(&s, "line %012d abcdefghijabcdefghijabcdefghijabcdefghijabcde\n", i)
		}
		return s.String()
	}
	for _, bc := range []struct{ name, text, lit string }{
		{"source", benchSource(1 << 20), "func main"},
		{"numbered", numbered(1<<20) + "func main\n", "func main"},
		{"dense", strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789\n", (1<<20)/55) + "a needle\n", "needle"},
	} {
		text := []byte(bc.text)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			l := newNeedle([]byte(bc.lit), false)
			for b.Loop() {
				s := l.search()
				if s.index(text, 0) < 0 {
					b.Fatal("no match")
				}
			}
		})
		b.Run(bc.name+"/bytes.Index", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if !bytes.Contains(text, []byte(bc.lit)) {
					b.Fatal("no match")
				}
			}
		})
	}
}
