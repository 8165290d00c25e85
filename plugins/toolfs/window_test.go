package toolfs

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

var defaultCaps = windowCaps{maxRunes: 2000, maxBytes: 51200}

// scanWhole windows text fed in one piece and builds the value.
func scanWhole(text string, caps windowCaps, offset, limit int) (*ReadResult, error) {
	return scanChunked(text, caps, offset, limit, len(text)+1)
}

func scanChunked(text string, caps windowCaps, offset, limit, size int) (*ReadResult, error) {
	w := newWindow(caps, offset, limit, 1, 0, nil)
	for b := []byte(text); len(b) > 0; {
		n := min(size, len(b))
		w.feed(b[:n])
		b = b[n:]
	}
	total := w.finish()
	return newReadResult("/abs/a.txt", readRequest{offset: offset, limit: limit}, w.lines, total)
}

func TestReadRender(t *testing.T) {
	const head = "<path>/abs/a.txt</path>\n<type>file</type>\n<content>\n"
	tests := []struct {
		name          string
		text          string
		caps          windowCaps
		offset, limit int
		want          string // the content between the envelope lines
	}{
		{"R-049 envelope", "hello\nworld", defaultCaps, 1, 2000, "1: hello\n2: world\n\n(End of file - total 2 lines)"},
		{"R-050 one line is still lines", "x", defaultCaps, 1, 2000, "1: x\n\n(End of file - total 1 lines)"},
		{"R-051 more remain", "a\nb\nc\nd\n", defaultCaps, 2, 2, "2: b\n3: c\n\n(Showing lines 2-3 of 4. Use offset=4 to continue.)"},
		{"R-052 byte cap", "aaaa\nbbbb", windowCaps{2000, 4}, 1, 2000, "1: aaaa\n\n(Output capped. Showing lines 1-1. Use offset=2 to continue.)"},
		{"R-053 readLimit as default", "a\nb\nc\nd", defaultCaps, 1, 2, "1: a\n2: b\n\n(Showing lines 1-2 of 4. Use offset=3 to continue.)"},
		{"R-054 empty file", "", defaultCaps, 1, 2000, "(End of file - total 0 lines)"},
		{"R-055 trailing newline adds no line", "one\ntwo\n", defaultCaps, 1, 2000, "1: one\n2: two\n\n(End of file - total 2 lines)"},
		{"R-055 lone newline is one empty line", "\n", defaultCaps, 1, 2000, "1: \n\n(End of file - total 1 lines)"},
		{"R-056 CRLF", "one\r\ntwo\r\n", defaultCaps, 1, 2000, "1: one\n2: two\n\n(End of file - total 2 lines)"},
		{"R-056 one CR stripped, inner CR kept", "c\r\r\nx\ry", defaultCaps, 1, 2000, "1: c\r\n2: x\ry\n\n(End of file - total 2 lines)"},
		{"R-056 lone CR", "\r", defaultCaps, 1, 2000, "1: \n\n(End of file - total 1 lines)"},
		{"R-057 truncation", "abcdef", windowCaps{4, 51200}, 1, 2000, "1: abcd... (line truncated to 4 chars)\n\n(End of file - total 1 lines)"},
		{"R-057 exactly max is kept", "abcd\nabcde", windowCaps{4, 51200}, 1, 2000, "1: abcd\n2: abcd... (line truncated to 4 chars)\n\n(End of file - total 2 lines)"},
		{"R-058 runes, never split (port decision)", "ab😀d", windowCaps{3, 51200}, 1, 2000, "1: ab😀... (line truncated to 3 chars)\n\n(End of file - total 1 lines)"},
		{"R-058 exactly max then CRLF", "abcd\r\nx", windowCaps{4, 51200}, 1, 2000, "1: abcd\n2: x\n\n(End of file - total 2 lines)"},
		{"R-058 CR at max+1 cuts without suffix", "abcd\refgh", windowCaps{4, 51200}, 1, 2000, "1: abcd\n\n(End of file - total 1 lines)"},
		{"R-060 byte cap keeps counting", "aaaa\nbbbb\ncccc", windowCaps{2000, 9}, 1, 2000, "1: aaaa\n2: bbbb\n\n(Output capped. Showing lines 1-2. Use offset=3 to continue.)"},
		{"R-060 suffix counts against the cap", "abcdef\nx", windowCaps{4, 35}, 1, 2000, "1: abcd... (line truncated to 4 chars)\n\n(Output capped. Showing lines 1-1. Use offset=2 to continue.)"},
		{"R-061 degenerate cap", "a\nbbbbbbbbbbbb\nc", windowCaps{2000, 5}, 2, 2000, "(Output capped. Showing lines 2-1. Use offset=2 to continue.)"},
		{"R-062 limit before EOF", "a\nb\nc", defaultCaps, 1, 1, "1: a\n\n(Showing lines 1-1 of 3. Use offset=2 to continue.)"},
		{"R-063 offset 1 on an empty file", "", defaultCaps, 1, 5, "(End of file - total 0 lines)"},
		{"R-071 NUL is text", "a\x00b", defaultCaps, 1, 5, "1: a\x00b\n\n(End of file - total 1 lines)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 3, 7, 1 << 20} {
				r, err := scanChunked(tt.text, tt.caps, tt.offset, tt.limit, size)
				if err != nil {
					t.Fatal(err)
				}
				if got := renderRead(r); got != head+tt.want+"\n</content>" {
					t.Fatalf("chunk %d: got\n%q\nwant\n%q", size, got, head+tt.want+"\n</content>")
				}
			}
		})
	}
}

// the default caps on 2000 lines of 100 characters stop at 506.
func TestReadDefaultByteCap(t *testing.T) {
	text := strings.Repeat(strings.Repeat("y", 100)+"\n", 2000)
	r, err := scanWhole(text, defaultCaps, 1, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(renderRead(r), "\n\n(Output capped. Showing lines 1-506. Use offset=507 to continue.)\n</content>") || r.TotalLines != 2000 {
		t.Fatalf("got %d lines of %d: %s", len(r.Lines), r.TotalLines, readFooter(r))
	}
}

// past the end is FS_NOT_FOUND, never singular.
func TestReadOffsetOutOfRange(t *testing.T) {
	for _, tt := range []struct {
		text   string
		offset int
		want   string
	}{
		{"a\nb", 3, `offset 3 is out of range for "/abs/a.txt" (2 lines)`},
		{"", 2, `offset 2 is out of range for "/abs/a.txt" (0 lines)`},
		{"a", 2, `offset 2 is out of range for "/abs/a.txt" (1 lines)`},
	} {
		_, err := scanWhole(tt.text, defaultCaps, tt.offset, 2000)
		var fe *fs.Error
		if !errors.As(err, &fe) || fe.Code != fs.CodeNotFound || fe.Message != tt.want {
			t.Errorf("got %v, want %s", err, tt.want)
		}
	}
}

// the canonical value of an empty file has lines [] (not null).
func TestReadValue(t *testing.T) {
	r, err := scanWhole("", defaultCaps, 1, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lines == nil || len(r.Lines) != 0 || r.TotalLines != 0 {
		t.Fatalf("got %+v", r)
	}
	r, _ = scanWhole("hello\nworld", defaultCaps, 1, 2000)
	if want := []Line{{1, "hello"}, {2, "world"}}; !reflect.DeepEqual(r.Lines, want) {
		t.Fatalf("got %+v", r.Lines)
	}
}

// a newline-free giant line holds at most maxRunes+1 characters.
func TestGiantLineBufferIsCapped(t *testing.T) {
	w := newWindow(windowCaps{maxRunes: 10, maxBytes: 51200}, 1, 10, 1, 0, nil)
	chunk := []byte(strings.Repeat("é", 4096))
	for range 256 {
		w.feed(chunk)
	}
	if cap(w.buf) > 64 || w.bufRunes != 11 {
		t.Fatalf("buffer grew to %d bytes (%d runes)", cap(w.buf), w.bufRunes)
	}
	if total := w.finish(); total != 1 || w.lines[0].Text != strings.Repeat("é", 10)+"... (line truncated to 10 chars)" {
		t.Fatalf("total %d, lines %+v", total, w.lines)
	}
}

// The cached path: a scan that starts at an indexed line gives the same page
// as a whole scan, for every offset. The index is forced dense (stride 2 and
// at most 4 entries, so it also re-strides) to exercise every boundary.
func TestIndexedStartMatchesWholeScan(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "line %d %s\r\n", i+1, strings.Repeat("ä", i%7))
	}
	b.WriteString("last")
	text := b.String()
	index := &indexBuilder{stride: 2}
	w := newWindow(defaultCaps, 1, 3, 1, 0, index)
	w.feed([]byte(text))
	total := w.finish()
	if total != 41 {
		t.Fatalf("total %d", total)
	}
	idx := index.freeze(total)
	for offset := 1; offset <= total; offset++ {
		want, err := scanWhole(text, defaultCaps, offset, 3)
		if err != nil {
			t.Fatal(err)
		}
		line, pos := idx.start(offset)
		if line > offset {
			t.Fatalf("start line %d after offset %d", line, offset)
		}
		w := newWindow(defaultCaps, offset, 3, line, pos, nil)
		for rest := []byte(text[pos:]); len(rest) > 0 && !w.full; rest = rest[min(5, len(rest)):] {
			w.feed(rest[:min(5, len(rest))])
		}
		w.finish()
		got, _ := newReadResult("/abs/a.txt", readRequest{offset: offset, limit: 3}, w.lines, total)
		if renderRead(got) != renderRead(want) {
			t.Fatalf("offset %d: got %q want %q", offset, renderRead(got), renderRead(want))
		}
	}
}

// The index never exceeds its entry budget, whatever the line count.
func TestIndexBounded(t *testing.T) {
	index := newIndexBuilder()
	w := newWindow(defaultCaps, 1, 1, 1, 0, index)
	chunk := []byte(strings.Repeat("\n", 1<<20))
	for range 64 { // 64 Mi lines
		w.feed(chunk)
	}
	if total := w.finish(); total != 64<<20 {
		t.Fatalf("total %d", total)
	}
	if len(index.offsets) > maxIndexEntries || index.stride <= indexStride {
		t.Fatalf("%d entries at stride %d", len(index.offsets), index.stride)
	}
	for k, off := range index.offsets {
		if off != int64(k*index.stride) {
			t.Fatalf("entry %d = %d, want %d", k, off, k*index.stride)
		}
	}
}

func TestNthNewline(t *testing.T) {
	b := []byte(strings.Repeat("ab\n", 5000))
	for _, n := range []int{1, 2, 1365, 1366, 4999, 5000} {
		if i, found := nthNewline(b, n); i != 3*n-1 || found != n {
			t.Errorf("n=%d: got %d,%d", n, i, found)
		}
	}
	if i, found := nthNewline(b, 5001); i != -1 || found != 5000 {
		t.Errorf("past the end: %d,%d", i, found)
	}
}

// FuzzReadWindow: chunked input gives exactly the whole-input page, and a
// page started from an index position matches too.
func FuzzReadWindow(f *testing.F) {
	f.Add("a\nb\r\nc", 1, 2, 3, 4, 20)
	f.Add("😀😀😀\r\n\r\r\n\n", 2, 1, 1, 2, 7)
	f.Add("abcd\refgh\n", 1, 1, 2, 4, 9)
	f.Fuzz(func(t *testing.T, text string, offset, limit, chunk, maxRunes, maxBytes int) {
		if offset < 1 || limit < 1 || chunk < 1 || maxRunes < 1 || maxBytes < 1 || offset > 1000 || limit > 1000 || maxRunes > 1000 {
			return
		}
		text = strings.ToValidUTF8(text, "\uFFFD")
		caps := windowCaps{maxRunes, maxBytes}
		want, wantErr := scanWhole(text, caps, offset, limit)
		got, gotErr := scanChunked(text, caps, offset, limit, chunk)
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Fatalf("errors differ: %v / %v", wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		if renderRead(got) != renderRead(want) {
			t.Fatalf("chunk %d: %q != %q", chunk, renderRead(got), renderRead(want))
		}
		// The cached path: index the text densely, then start from the
		// closest indexed line and stop once the page is full.
		index := &indexBuilder{stride: 1 + chunk%3}
		w := newWindow(caps, 1, 1, 1, 0, index)
		w.feed([]byte(text))
		idx := index.freeze(w.finish())
		line, pos := idx.start(offset)
		w = newWindow(caps, offset, limit, line, pos, nil)
		for rest := []byte(text[pos:]); len(rest) > 0 && !w.full; rest = rest[min(chunk, len(rest)):] {
			w.feed(rest[:min(chunk, len(rest))])
		}
		w.finish()
		indexed, err := newReadResult("/abs/a.txt", readRequest{offset: offset, limit: limit}, w.lines, idx.total)
		if err != nil || renderRead(indexed) != renderRead(want) {
			t.Fatalf("indexed: %v %q != %q", err, renderRead(indexed), renderRead(want))
		}
	})
}
