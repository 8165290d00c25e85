package toolfs_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/internal/peakrss"
	"github.com/gordis-run/gordis/plugins/toolfs"
)

// Big fixtures (512 MiB) are built only with GORDIS_BIG_BENCH=1; otherwise
// the read benchmarks use a 16 MiB file, still above readStreamMinSize.
func bigBench() bool { return os.Getenv("GORDIS_BIG_BENCH") == "1" }

func readFixtureSize() int64 {
	if bigBench() {
		return 512 << 20
	}
	return 16 << 20
}

// fixtureLine is 100 bytes with its newline, numbered so pages differ.
func fixtureLine(w *bufio.Writer, i int) {
	s := strconv.Itoa(i)
	w.WriteString(s)
	w.WriteByte(' ')
	w.WriteString(strings.Repeat("x", 98-len(s)))
	w.WriteByte('\n')
}

func writeFixture(tb testing.TB, path string, size int64) (lines int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for ; int64(lines)*100 < size; lines++ {
		fixtureLine(w, lines+1)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	// Written back before timing starts: reads racing the writeback of the
	// file's pages take twice as long and vary from run to run.
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return lines
}

var (
	bigOnce  sync.Once
	bigDir   string
	bigLines int
)

// bigFile is the shared read fixture, built once per test binary.
func bigFile(tb testing.TB) (string, int) {
	bigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolfs-bench-")
		if err != nil {
			tb.Fatal(err)
		}
		bigDir = dir
		bigLines = writeFixture(tb, filepath.Join(dir, "big.txt"), readFixtureSize())
	})
	return filepath.Join(bigDir, "big.txt"), bigLines
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

func benchRead(b *testing.B, last, cold bool) { benchReadWith(b, options{direct: true}, last, cold) }

func benchReadWith(b *testing.B, o options, last, cold bool) {
	path, lines := bigFile(b)
	e := setup(b, o)
	offset := 1
	if last {
		offset = lines - 1999
	}
	a := args{"file_path": path, "offset": offset}
	b.ReportAllocs()
	if cold {
		b.SetBytes(readFixtureSize()) // every call scans the whole file
	} else if r := e.call(nil, "read", a); r.IsError { // index the file once
		b.Fatal(r.Text)
	}
	for i := 0; b.Loop(); i++ {
		if cold {
			// A new mtime is a new version: no cached line index applies.
			b.StopTimer()
			now := time.Now().Add(time.Duration(i) * time.Second)
			if err := os.Chtimes(path, now, now); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if r := e.call(nil, "read", a); r.IsError {
			b.Fatal(r.Text)
		}
	}
}

// Upstream: first 2000 lines of 512 MiB in 696 ms, last 2000 in 732 ms.
func BenchmarkReadFirstPageCold(b *testing.B) { benchRead(b, false, true) }
func BenchmarkReadLastPageCold(b *testing.B)  { benchRead(b, true, true) }

// The same cold read through a provider without fs.LineScanner (the
// sequential pinned stream), for comparison in one run.
func BenchmarkReadFirstPageColdSequential(b *testing.B) {
	benchReadWith(b, options{sequential: true}, false, true)
}

// BenchmarkWcLines runs `wc -l` on the read fixture (cached by then), the
// floor that the cold first-page read is held to, in the same run.
func BenchmarkWcLines(b *testing.B) {
	wc, err := exec.LookPath("wc")
	if err != nil {
		b.Skip("no wc")
	}
	path, lines := bigFile(b)
	b.SetBytes(readFixtureSize())
	for b.Loop() {
		out, err := exec.Command(wc, "-l", path).Output()
		if err != nil {
			b.Fatal(err)
		}
		if got := strings.Fields(string(out)); len(got) == 0 || got[0] != strconv.Itoa(lines) {
			b.Fatalf("wc -l: %q, want %d lines", out, lines)
		}
	}
}

// Repeated pages of an unchanged file use the cached line index.
func BenchmarkReadFirstPageWarm(b *testing.B) { benchRead(b, false, false) }
func BenchmarkReadLastPageWarm(b *testing.B)  { benchRead(b, true, false) }

// Upstream: page 1 of a 10,100-entry directory in 854 ms.
func BenchmarkListPage(b *testing.B) {
	e := setup(b, options{direct: true})
	for i := range 10000 {
		e.write(b, fmt.Sprintf("f-%05d.txt", i), "")
	}
	for i := range 100 {
		if err := os.Mkdir(e.path(fmt.Sprintf("Dir %d", i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := e.call(nil, "list", args{}); r.IsError {
			b.Fatal(r.Text)
		}
	}
}

// Upstream: an edit of a 10 MiB file in 37 ms (read-before-write policy on).
func BenchmarkEdit10MiB(b *testing.B) {
	e := setup(b, options{policy: true, direct: true})
	s := newSession(e.dir)
	writeFixture(b, e.path("ten.txt"), 10<<20)
	text := e.content(b, "ten.txt")
	e.write(b, "ten.txt", text[:len(text)/2]+"MARKER_A\n"+text[len(text)/2:])
	if r := e.call(s, "read", args{"file_path": "ten.txt", "limit": 1}); r.IsError {
		b.Fatal(r.Text)
	}
	swap := [2]string{"MARKER_A", "MARKER_B"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if r := e.call(s, "edit", args{"file_path": "ten.txt", "old_string": swap[i%2], "new_string": swap[(i+1)%2]}); r.IsError {
			b.Fatal(r.Text)
		}
	}
}

// TestReadPeakMemory reads the first and last pages of the big fixture in a
// fresh process and checks its peak resident set (VmHWM) stays under 32 MiB.
func TestReadPeakMemory(t *testing.T) {
	if path := os.Getenv("TOOLFS_PEAK_CHILD"); path != "" {
		peakChild(t, path)
		return
	}
	if !bigBench() {
		t.Skip("set GORDIS_BIG_BENCH=1")
	}
	path, _ := bigFile(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadPeakMemory$", "-test.v")
	cmd.Env = append(os.Environ(), "TOOLFS_PEAK_CHILD="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var kib int
	for _, line := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "peak RSS: %d KiB", &kib); err == nil {
			break
		}
	}
	t.Logf("peak RSS of a process reading first and last pages of 512 MiB: %d KiB", kib)
	if kib == 0 || kib > 32<<10 {
		t.Fatalf("VmHWM %d KiB\n%s", kib, out)
	}
}

func peakChild(t *testing.T, path string) {
	e := setup(t, options{direct: true})
	for _, offset := range []int{1, 0} {
		a := args{"file_path": path}
		if offset > 0 {
			a["offset"] = offset
		}
		r := e.call(nil, "read", a)
		if r.IsError {
			t.Fatal(r.Text)
		}
		last := r.Value.(*toolfs.ReadResult).TotalLines - 1999
		r = e.call(nil, "read", args{"file_path": path, "offset": last})
		if r.IsError {
			t.Fatal(r.Text)
		}
	}
	peak, ok := peakrss.Self()
	if !ok {
		t.Fatal("no VmHWM in /proc/self/status")
	}
	fmt.Printf("peak RSS: %d KiB\n", peak>>10)
}
