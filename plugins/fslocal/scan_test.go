package fslocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/gordis-run/gordis/plugins/fs"
)

// scanned is what a scan visited: the text, its newline count, and whether
// every segment's count was right.
type scanned struct {
	text     string
	newlines int
	visits   int
}

// scanPath stats path and scans that version as how says. It fails the
// test when a segment's count disagrees with its bytes.
func scanPath(t testing.TB, f *FS, path string, how scanStrategy) (scanned, error) {
	t.Helper()
	tg := fs.Target{Key: path, Path: path}
	info, err := f.Stat(context.Background(), tg)
	if err != nil || info == nil {
		t.Fatalf("stat: %v", err)
	}
	var got scanned
	var text bytes.Buffer
	err = f.scanLines(context.Background(), tg, info.Version, how, func(b []byte, n int) error {
		if c := bytes.Count(b, newline); c != n {
			t.Fatalf("segment %q counted %d newlines, holds %d", b, n, c)
		}
		if len(b) == 0 {
			t.Fatal("empty segment")
		}
		text.Write(b)
		got.newlines += n
		got.visits++
		return nil
	})
	got.text = text.String()
	return got, err
}

// wantLikeReadText checks a scan against ReadText of the same file: the same
// text, or the same error message and code.
func wantLikeReadText(t testing.TB, f *FS, path string, how scanStrategy) {
	t.Helper()
	want, wantErr := f.ReadText(context.Background(), fs.Target{Key: path, Path: path})
	got, err := scanPath(t, f, path, how)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || fs.CodeOf(err) != fs.CodeOf(wantErr) {
		t.Fatalf("%+v: scan error %v, ReadText error %v", how, err, wantErr)
	}
	if err == nil && (got.text != want || got.newlines != strings.Count(want, "\n")) {
		t.Fatalf("%+v: scanned %.200q (%d newlines), ReadText %.200q", how, got.text, got.newlines, want)
	}
}

// cutSeqs are valid and invalid sequences to place on chunk cuts.
var cutSeqs = []string{
	"é", "✓", "😀", "\r\n", // valid, 1 to 4 bytes
	"\x80", "\xBF\xBF", "\x80\x80\x80\x80", // stray continuation bytes
	"\xC3", "\xE2\x9C", "\xF0\x9F\x98", "\xF4", // truncated
	"\xC3\xC3\xA9", "\xE2\x9C\x80\x80", "\xF0\x9F\x98\x80\x80", // one continuation too many
	"\xC0\x80", "\xE0\x80\x80", "\xF0\x80\x80\x80", // overlong
	"\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", // surrogate, too large, never a lead
}

// Every sequence, valid or not, placed at every offset around a chunk cut:
// the chunked validation agrees with utf8.Valid of the whole.
func TestScanCutsAnywhere(t *testing.T) {
	dir := t.TempDir()
	f := NewUnconfined(dir)
	path := filepath.Join(dir, "f")
	for _, chunk := range []int{4, 5, 6, 7, 9} {
		for _, seq := range cutSeqs {
			for at := 0; at <= 2*chunk; at++ {
				for _, tail := range []int{0, 1, 3, chunk} {
					data := strings.Repeat("a", at) + seq + strings.Repeat("b", tail)
					if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
					wantLikeReadText(t, f, path, scanConfig{chunk: chunk, workers: 1 + at%3, read: tail%2 == 1})
				}
			}
		}
	}
}

// The same at the cuts between the segments of one chunk, where the
// validation also stops and resumes, and with a last segment shorter than
// a character.
func TestScanSegmentCuts(t *testing.T) {
	dir := t.TempDir()
	f := NewUnconfined(dir)
	path := filepath.Join(dir, "f")
	for _, seq := range cutSeqs {
		for _, at := range []int{scanSegment - 4, scanSegment - 1, scanSegment, scanSegment + 1, 2*scanSegment - 2, 2*scanSegment - 1, 2*scanSegment + 1} {
			data := strings.Repeat("a", at) + seq + strings.Repeat("b", 3*scanSegment-at)
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{4 * scanSegment, 2*scanSegment + 2} {
				wantLikeReadText(t, f, path, scanConfig{chunk: chunk, workers: 2, read: at%2 == 0})
			}
		}
	}
}

// randomText mixes ASCII, CR, LF, CRLF, 2- to 4-byte characters, and (when
// bad) invalid sequences and NULs, optionally behind a BOM.
func randomText(r *rand.Rand, size int, bad bool) []byte {
	pieces := []string{"a", "bc", "\n", "\r\n", "\r", "é", "✓", "😀", "\n\n"}
	broken := []string{"\x80", "\xC3", "\xE2\x9C", "\xF0\x9F\x98", "\xED\xA0\x80", "\xC0\x80", "\xFF", "\x00"}
	var b []byte
	if r.IntN(3) == 0 {
		b = append(b, bom...)
	}
	for len(b) < size {
		if bad && r.IntN(size/2+1) == 0 {
			b = append(b, broken[r.IntN(len(broken))]...)
			continue
		}
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return b
}

// The parallel scan gives what ReadText gives, over many generated files and
// chunkings: the same text and newline count, or the same error (binary
// before invalid, a NUL after byte 8192 is text: ).
func TestScanMatchesReadText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	f := NewUnconfined(dir)
	path := filepath.Join(dir, "f")
	for i := range 600 {
		size := r.IntN(200)
		if i%10 == 0 {
			size = 8000 + r.IntN(30000) // around the binary-sniff window
		}
		data := randomText(r, size, i%2 == 0)
		if i%7 == 0 && len(data) > 8200 {
			data[8192+r.IntN(len(data)-8192)] = 0 // text, not binary
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		chunk := utf8.UTFMax + r.IntN(max(size/3, 8))
		wantLikeReadText(t, f, path, scanConfig{chunk: chunk, workers: 1 + r.IntN(4), read: i%3 == 0})
	}
}

// FuzzScan: how the text is cut into chunks and how many workers share them
// never changes what a scan returns.
func FuzzScan(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint8(0), uint8(0))
	f.Add([]byte("\xEF\xBB\xBFa😀b✓c\r\n"), uint8(1), uint8(2))
	f.Add([]byte("ab😀\xF0\x9F\x98"), uint8(3), uint8(1))
	f.Add([]byte("abc\xED\xA0\x80def"), uint8(2), uint8(3))
	f.Add([]byte("abcd\x80\x80"), uint8(0), uint8(0))
	f.Add([]byte("a\x00\xFF"), uint8(5), uint8(5))
	f.Add([]byte(""), uint8(0), uint8(0))
	dir := f.TempDir()
	fsys := NewUnconfined(dir)
	path := filepath.Join(dir, "f")
	f.Fuzz(func(t *testing.T, data []byte, chunk, workers uint8) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		wantLikeReadText(t, fsys, path, scanConfig{chunk: utf8.UTFMax + int(chunk%64), workers: 1 + int(workers%4), read: workers&4 != 0})
	})
}

// bothViews runs a test with mapped and with read chunks of 4 KiB.
func bothViews(t *testing.T, test func(t *testing.T, cfg scanConfig)) {
	for _, read := range []bool{false, true} {
		t.Run(fmt.Sprintf("read=%v", read), func(t *testing.T) {
			test(t, scanConfig{chunk: 4096, workers: 2, read: read})
		})
	}
}

// writeScanned writes n lines of "line\n" to a fresh file and returns its target and version.
func writeScanned(t *testing.T, f *FS, path string, n int) (fs.Target, fs.Version) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Repeat("line\n", n)), 0o644); err != nil {
		t.Fatal(err)
	}
	tg := fs.Target{Key: path, Path: path}
	info, err := f.Stat(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	return tg, info.Version
}

// cancellation is checked between chunks; nothing is visited after
// it, and the workers are gone when the scan returns.
func TestScanCancelledBetweenChunks(t *testing.T) {
	bothViews(t, func(t *testing.T, cfg scanConfig) {
		dir := t.TempDir()
		f := NewUnconfined(dir)
		tg, v := writeScanned(t, f, filepath.Join(dir, "f"), 64<<10)
		ctx, cancel := context.WithCancel(context.Background())
		visits := 0
		err := f.scanLines(ctx, tg, v, cfg, func([]byte, int) error {
			visits++
			cancel()
			return nil
		})
		if fmt.Sprint(err) != "read aborted" || !errors.Is(err, fs.ErrAborted) || visits != 1 {
			t.Fatalf("%v after %d visits", err, visits)
		}
		if err := f.ScanLines(ctx, tg, v, nil); fmt.Sprint(err) != "read aborted" {
			t.Fatalf("pre-cancelled: %v", err)
		}
	})
}

// A visitor's error stops the scan and comes back as is.
func TestScanVisitorError(t *testing.T) {
	bothViews(t, func(t *testing.T, cfg scanConfig) {
		dir := t.TempDir()
		f := NewUnconfined(dir)
		tg, v := writeScanned(t, f, filepath.Join(dir, "f"), 64<<10)
		stop := errors.New("stop")
		visits := 0
		err := f.scanLines(context.Background(), tg, v, cfg, func([]byte, int) error {
			if visits++; visits == 3 {
				return stop
			}
			return nil
		})
		if err != stop || visits != 3 {
			t.Fatalf("%v after %d visits", err, visits)
		}
	})
}

// A panic in the visitor that is not a fault of a mapped chunk is not the
// scan's to handle: it goes on, after the workers stopped.
func TestScanVisitorPanic(t *testing.T) {
	bothViews(t, func(t *testing.T, cfg scanConfig) {
		dir := t.TempDir()
		f := NewUnconfined(dir)
		tg, v := writeScanned(t, f, filepath.Join(dir, "f"), 64<<10)
		var nilMap map[string]int
		defer func() {
			if r := recover(); fmt.Sprint(r) != "assignment to entry in nil map" {
				t.Fatalf("recovered %v", r)
			}
		}()
		f.scanLines(context.Background(), tg, v, cfg, func([]byte, int) error {
			nilMap["x"] = 1
			return nil
		})
		t.Fatal("no panic")
	})
}

// The scanned text belongs to one version: a file that is not at the
// version, or changes (grows, shrinks) during the scan, is FS_STALE_VERSION.
// A shrinking file is noticed when a worker or the visitor touches a
// mapped page the file lost (a fault), or by a short read.
func TestScanStaleVersion(t *testing.T) {
	bothViews(t, func(t *testing.T, cfg scanConfig) {
		dir := t.TempDir()
		f := NewUnconfined(dir)
		path := filepath.Join(dir, "f")
		changedMsg := `cannot read "` + path + `": file changed since it was read`
		tests := []struct {
			name   string
			during func() error
		}{
			{"appended", func() error {
				a, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err == nil {
					_, err = a.WriteString("more\n")
					a.Close()
				}
				return err
			}},
			{"truncated", func() error { return os.Truncate(path, 1) }},
			{"rewritten in place", func() error { return os.WriteFile(path, []byte(strings.Repeat("LINE\n", 64<<10)), 0o644) }},
			// Workers still to validate a chunk meet the bad bytes: still a change, not "invalid UTF-8".
			{"rewritten as invalid text", func() error { return os.WriteFile(path, bytes.Repeat([]byte("\xff\n"), 160<<10), 0o644) }},
		}
		for _, tt := range tests {
			tg, v := writeScanned(t, f, path, 64<<10)
			visits, sum := 0, 0
			err := f.scanLines(context.Background(), tg, v, cfg, func(b []byte, _ int) error {
				if visits++; visits == 1 {
					return tt.during()
				}
				sum += int(bytes.Clone(b)[0]) // touch the text
				return nil
			})
			if fmt.Sprint(err) != changedMsg || !errors.Is(err, fs.ErrStaleVersion) {
				t.Fatalf("%s: got %v", tt.name, err)
			}
		}
		tg, _ := writeScanned(t, f, path, 1)
		if err := f.ScanLines(context.Background(), tg, "0:0:0:0:0", nil); fmt.Sprint(err) != changedMsg {
			t.Fatalf("wrong version: %v", err)
		}
		os.Remove(path)
		if err := f.ScanLines(context.Background(), tg, "0:0:0:0:0", nil); fmt.Sprint(err) != `cannot read "`+path+`": file no longer exists` || !errors.Is(err, fs.ErrStaleVersion) {
			t.Fatalf("deleted: %v", err)
		}
	})
}

// A worker that views past the file's end (the file shrank after it was
// opened) fails with the changed-file error: a fault on a mapped chunk, a
// short read on a read one. The visitor sees only the text before it. (The
// rest of a last page maps as zeros, not a fault: a file that shrinks
// within a page is caught by the version check after the scan.)
func TestScanShrunkFile(t *testing.T) {
	bothViews(t, func(t *testing.T, cfg scanConfig) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, []byte(strings.Repeat("x", 8192)), 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		s := scan{ctx: context.Background(), file: file, path: path, end: 64 << 10}
		seen := 0
		err = s.run(cfg, s.start, s.end, func(b []byte, _ int) error {
			seen += len(b)
			return nil
		})
		if fmt.Sprint(err) != `cannot read "`+path+`": file changed since it was read` || seen == 0 || seen > 8192 {
			t.Fatalf("%v after %d bytes", err, seen)
		}
	})
}

// BenchmarkScanLines scans a whole file version (the read tool's first read
// of a large file): "chosen" through ScanLines, which measures the methods
// on its first large scan and again every scanRechoose; each method alone;
// and "measuring", where every scan measures, so that its time against the
// chosen method's is what measuring costs. 16 MiB (below scanTrialMin, so
// that ScanLines does not measure there), and 512 MiB with
// GORDIS_BIG_BENCH=1.
func BenchmarkScanLines(b *testing.B) {
	sizes := []int{16 << 20}
	if os.Getenv("GORDIS_BIG_BENCH") == "1" {
		sizes = append(sizes, 512<<20)
	}
	type way struct {
		name string
		how  scanStrategy // nil: ScanLines
	}
	ways := []way{{"chosen", nil}}
	for _, m := range scanCandidates() {
		ways = append(ways, way{methodName(m), m})
	}
	ways = append(ways, way{"measuring", measuring{&scanChooser{}}})
	for _, size := range sizes {
		for _, text := range []struct {
			name  string
			every int
		}{{"code", 16}, {"multibyte", 1}} {
			b.Run(fmt.Sprintf("%dMiB/%s", size>>20, text.name), func(b *testing.B) {
				dir := b.TempDir()
				path := filepath.Join(dir, "big.txt")
				textFile(b, path, size, text.every)
				f := NewUnconfined(dir)
				tg := fs.Target{Key: path, Path: path}
				info, err := f.Stat(context.Background(), tg)
				if err != nil {
					b.Fatal(err)
				}
				for _, way := range ways {
					b.Run(way.name, func(b *testing.B) {
						b.SetBytes(int64(size))
						b.ReportAllocs()
						resetPeakRSS()
						for b.Loop() {
							lines := 0
							count := func(_ []byte, n int) error {
								lines += n
								return nil
							}
							if way.how == nil {
								err = f.ScanLines(context.Background(), tg, info.Version, count)
							} else {
								err = f.scanLines(context.Background(), tg, info.Version, way.how, count)
							}
							if err != nil || lines != size/80 {
								b.Fatalf("%d lines, %v", lines, err)
							}
						}
						b.StopTimer()
						reportPeakRSS(b)
						if way.how == nil && size >= scanTrialMin {
							scanMethods.mu.Lock()
							b.Logf("chosen: %s, at %v per MiB", methodName(scanMethods.methods[scanMethods.best]), scanMethods.perMiB[scanMethods.best])
							scanMethods.mu.Unlock()
						}
					})
				}
			})
		}
	}
}

// A read view starts in its buffer at the offset within a page where its
// file offset does, whichever buffer it gets: copies out of the page cache
// into a buffer at another offset run several times slower.
func TestScanReadViewAligned(t *testing.T) {
	page := int64(os.Getpagesize())
	var j scanJob
	for _, from := range []int64{0, 1, 3, page - 1, page + 7, 1<<20 - 3, 5<<20 + 1} {
		for _, n := range []int64{1, 100, scanReadChunk + 2*scanAhead} {
			if err := j.view(&scan{}, from, from+n, true); err != nil {
				t.Fatal(err)
			}
			addr := int64(uintptr(unsafe.Pointer(unsafe.SliceData(j.data))))
			if (addr-from)&(page-1) != 0 || int64(len(j.data)) != n {
				t.Fatalf("view of [%d, %d): %d bytes at %#x", from, from+n, len(j.data), addr)
			}
		}
		putScanBuf(j.buf)
		j.buf = nil
	}
}

// methodName names a scan method for benchmarks: "read1", "read2", "map2".
func methodName(m scanConfig) string {
	if m.read {
		return fmt.Sprintf("read%d", m.workers)
	}
	return fmt.Sprintf("map%d", m.workers)
}

// Read buffers are kept up to a fixed number, of one size: returning more
// never blocks, and a larger buffer, made for a larger view, is not kept.
func TestScanBufsBounded(t *testing.T) {
	for len(scanBufs) > 0 {
		<-scanBufs
	}
	for range 2 * cap(scanBufs) {
		putScanBuf(make([]byte, scanBufSize))
	}
	if len(scanBufs) != cap(scanBufs) {
		t.Fatalf("%d buffers kept, want %d", len(scanBufs), cap(scanBufs))
	}
	if b := getScanBuf(scanBufSize - 1); cap(b) != scanBufSize || len(scanBufs) != cap(scanBufs)-1 {
		t.Fatalf("got a buffer of %d bytes, %d kept", cap(b), len(scanBufs))
	}
	big := getScanBuf(scanBufSize + 1)
	putScanBuf(big)
	if cap(big) != scanBufSize+1 || len(scanBufs) != cap(scanBufs)-1 {
		t.Fatalf("larger buffer of %d bytes: %d kept", cap(big), len(scanBufs))
	}
}
