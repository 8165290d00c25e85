package toolfs

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzFeedCounted: feeding a window segments with their newline counts, in
// any cutting, gives the page, the total and the line index of feeding the
// text whole (R-059..R-062). A counted segment that holds the page's first
// line or an index line must be looked at, any other may be skipped.
func FuzzFeedCounted(f *testing.F) {
	f.Add("a\nb\r\nc", 1, 2, 3, 2)
	f.Add("😀😀😀\r\n\r\r\n\n", 2, 1, 1, 1)
	f.Add(strings.Repeat("line\n", 50)+"end", 17, 5, 7, 3)
	f.Add(strings.Repeat("\n", 40), 39, 3, 4, 1)
	f.Fuzz(func(t *testing.T, text string, offset, limit, cut, stride int) {
		if offset < 1 || limit < 1 || cut < 1 || stride < 1 || offset > 1000 || limit > 1000 || cut > 1000 || stride > 100 {
			return
		}
		text = strings.ToValidUTF8(text, "\uFFFD")
		caps := windowCaps{maxRunes: 5, maxBytes: 40}
		wantIndex := &indexBuilder{stride: stride}
		want := newWindow(caps, offset, limit, 1, 0, wantIndex)
		want.feed([]byte(text))
		wantTotal := want.finish()

		gotIndex := &indexBuilder{stride: stride}
		got := newWindow(caps, offset, limit, 1, 0, gotIndex)
		for i, rest := 0, []byte(text); len(rest) > 0; i++ {
			seg := rest[:min(len(rest), 1+(cut*(i+1))%17)]
			got.feedCounted(seg, bytes.Count(seg, newline))
			rest = rest[len(seg):]
		}
		if total := got.finish(); total != wantTotal {
			t.Fatalf("total %d, want %d", total, wantTotal)
		}
		if !reflect.DeepEqual(got.lines, want.lines) {
			t.Fatalf("lines %+v, want %+v", got.lines, want.lines)
		}
		if !reflect.DeepEqual(gotIndex, wantIndex) {
			t.Fatalf("index %+v, want %+v", gotIndex, wantIndex)
		}
	})
}
