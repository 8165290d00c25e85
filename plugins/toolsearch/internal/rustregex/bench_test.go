package rustregex

import (
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
