package toolfs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
)

// Where fslocal cuts a scan (its 4 MiB chunks and 16 KiB segments), in
// file offsets: the text starts after the 3-byte BOM.
const (
	segmentCut = 3 + 1<<20 // inside the first chunk
	chunkCut   = 3 + 4<<20
	nextCut    = chunkCut + 16<<10 // the first segment of the second chunk ends
)

// scanFixture is about 4.1 MiB of text behind a BOM whose awkward bytes sit
// on fslocal's cuts: a CRLF split between its CR and LF at segmentCut, and a
// 4-byte emoji split in its middle at chunkCut and nextCut.
func scanFixture() string {
	var b strings.Builder
	b.WriteString("\ufeff")
	lines := func(upto int) {
		for i := 0; b.Len() < upto-100; i++ {
			fmt.Fprintf(&b, "%d %s\r\n", i, strings.Repeat("é", i%40))
		}
		for b.Len() < upto {
			b.WriteByte('x')
		}
	}
	lines(segmentCut - 1)
	b.WriteString("\r\n") // the CR ends a segment, the LF starts the next
	lines(chunkCut - 2)
	b.WriteString("😀\n") // two bytes on each side of the cut between the chunks
	lines(nextCut - 2)
	b.WriteString("😀\n")
	lines(nextCut + 20000)
	b.WriteString("no newline at the end")
	return b.String()
}

// R-050..R-062, R-072: the first read of a large file through the provider's
// parallel LineScanner renders exactly what the whole read and the plain
// stream render, for pages at the start, across the chunk cuts, at the end
// and past it; it scans once, and later pages come from the index.
func TestReadScanMatchesStream(t *testing.T) {
	text := scanFixture()
	whole := setup(t, options{config: toolfs.Config{ReadStreamMinSize: 64 << 20}})
	scan := setup(t, options{scanner: true, config: toolfs.Config{ReadStreamMinSize: 1}})
	stream := setup(t, options{noSeeker: true, config: toolfs.Config{ReadStreamMinSize: 1}})
	for _, e := range []*env{whole, scan, stream} {
		e.write(t, "big.txt", text)
	}
	total := whole.call(nil, "read", args{"file_path": "big.txt"}).Value.(*toolfs.ReadResult).TotalLines
	crlf := strings.Count(text[:segmentCut], "\n") + 1 // the line after the split CRLF
	emoji := strings.Count(text[:chunkCut], "\n") + 1  // the line of the emoji split between chunks
	for _, offset := range []int{total - 1999, 1, 2, crlf - 1, crlf, emoji - 1, emoji, 4097, total, total + 1} {
		for _, limit := range []int{3, 2000} {
			a := args{"file_path": "big.txt", "offset": offset, "limit": limit}
			want := strings.ReplaceAll(whole.call(nil, "read", a).Text, whole.dir, "")
			for name, e := range map[string]*env{"scan": scan, "stream": stream} {
				if got := strings.ReplaceAll(e.call(nil, "read", a).Text, e.dir, ""); got != want {
					t.Fatalf("%s offset %d limit %d:\n%q\nwant\n%q", name, offset, limit, got, want)
				}
			}
		}
	}
	if n := scan.fsys.scans.Load(); n != 1 {
		t.Errorf("%d scans, want 1 (the first read; the rest from the index)", n)
	}
	if scan.fsys.streams.Load() != 0 || scan.fsys.seeksAt.Load() == 0 {
		t.Errorf("scan env: %d plain streams, %d indexed starts", scan.fsys.streams.Load(), scan.fsys.seeksAt.Load())
	}
}

// R-070..R-073: invalid UTF-8 anywhere fails the whole read with no
// partial page, wherever it sits relative to the chunk cuts; a NUL in the
// first 8192 bytes is binary, one after them is text.
func TestReadScanDecodingErrors(t *testing.T) {
	text := scanFixture()
	scan := setup(t, options{scanner: true, config: toolfs.Config{ReadStreamMinSize: 1}})
	stream := setup(t, options{noSeeker: true, config: toolfs.Config{ReadStreamMinSize: 1}})
	invalid := "Error: cannot read \"%s\": invalid UTF-8 text"
	tests := []struct {
		at   int
		bad  string
		want string
	}{
		{chunkCut - 2, "\xFF", invalid},           // before the emoji over the chunk cut
		{chunkCut, "\x80", invalid},               // inside it: one continuation too many
		{chunkCut + 2, "\xC3", invalid},           // after it
		{segmentCut - 1, "\xF0\x9F\x98", invalid}, // a truncated emoji over a segment cut
		{nextCut + 1, "\xED\xA0\x80", invalid},
		{len(text), "\xE2\x82", invalid}, // truncated at the end of the file
		{100, "\x00", "Error: cannot read \"%s\": binary file"},
		{9000, "\x00", ""},
	}
	for _, tt := range tests {
		bad := text[:tt.at] + tt.bad + text[tt.at:]
		for name, e := range map[string]*env{"scan": scan, "stream": stream} {
			e.write(t, "bad.txt", bad)
			r := e.call(nil, "read", args{"file_path": "bad.txt", "limit": 5})
			if tt.want == "" {
				if r.IsError {
					t.Fatalf("%s: NUL at %d: %s", name, tt.at, r.Text)
				}
				continue
			}
			wantError(t, r, fmt.Sprintf(tt.want, e.path("bad.txt")), fs.CodeNotText)
		}
	}
	if scan.fsys.scans.Load() != int32(len(tests)) { // each file is a new version
		t.Errorf("%d scans", scan.fsys.scans.Load())
	}
}

// a read cancelled in the middle of the parallel scan fails
// with "read aborted" and observes nothing.
func TestReadScanCancelled(t *testing.T) {
	e := setup(t, options{policy: true, scanner: true, config: toolfs.Config{ReadStreamMinSize: 1}})
	e.write(t, "a.txt", strings.Repeat("line\n", 1<<20))
	ctx, cancel := context.WithCancel(context.Background())
	e.fsys.onStream = cancel
	s := newSession(e.dir)
	r := e.tools.Execute(ctx, &registry.Call{ID: "1", Tool: "read", Args: json.RawMessage(`{"file_path":"a.txt"}`), Session: s})
	wantError(t, r, "Error: read aborted", fs.CodeAborted)
	if e.fsys.scans.Load() != 1 {
		t.Fatalf("%d scans", e.fsys.scans.Load())
	}
	e.fsys.onStream = nil
	wantError(t, e.call(s, "edit", args{"file_path": "a.txt", "old_string": "line", "new_string": "x", "replace_all": true}),
		`Error: edit requires reading "`+e.path("a.txt")+`" first`, fs.CodeNotObserved)
}
