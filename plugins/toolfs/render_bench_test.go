package toolfs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

// BenchmarkWindow is the in-memory cost of one read page over 16 MiB of
// 100-byte lines: 2000 lines collected, the rest counted and indexed.
func BenchmarkWindow(b *testing.B) {
	text := []byte(strings.Repeat(strings.Repeat("x", 99)+"\n", 16<<20/100))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		w := newWindow(defaultCaps, 1, 2000, 1, 0, newIndexBuilder())
		for c := text; len(c) > 0; c = c[min(64<<10, len(c)):] {
			w.feed(c[:min(64<<10, len(c))])
		}
		w.finish()
	}
}

// BenchmarkSortListing sorts 10,100 names by group and ICU collation.
func BenchmarkSortListing(b *testing.B) {
	var src []ListEntry
	for i := range 10000 {
		src = append(src, ListEntry{fmt.Sprintf("f-%05d.txt", 9999-i), fs.TypeFile})
	}
	for i := range 100 {
		src = append(src, ListEntry{fmt.Sprintf("Dir %d", i), fs.TypeDirectory})
	}
	b.ReportAllocs()
	for b.Loop() {
		var lb listingBuilder
		for _, e := range src {
			lb.add(e.Name, e.Type)
		}
		lb.sorted()
	}
}

// BenchmarkRenderList renders a 200-entry page, one name in ten quoted.
func BenchmarkRenderList(b *testing.B) {
	r := &ListResult{Path: "/w", Offset: 1, TotalEntries: 10100, Counts: ListCounts{100, 10000, 0}}
	for i := range 200 {
		name := fmt.Sprintf("file-%d.go", i)
		if i%10 == 0 {
			name += "@"
		}
		r.Entries = append(r.Entries, ListEntry{name, fs.TypeFile})
	}
	b.ReportAllocs()
	for b.Loop() {
		renderList(r)
	}
}
