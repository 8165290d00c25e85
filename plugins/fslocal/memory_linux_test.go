package fslocal

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gordis-run/gordis/internal/peakrss"
	"github.com/gordis-run/gordis/plugins/fs"
)

// hugeChild names the call a re-executed test binary makes on the file
// named by hugeFile, for TestHugeFileMemory.
const (
	hugeChild = "FSLOCAL_HUGE_CHILD"
	hugeFile  = "FSLOCAL_HUGE_FILE"
	// hugeReport starts the child's line with its peak RSS in bytes.
	hugeReport = "peak RSS: "
)

// hugeCall is one call TestHugeFileMemory measures, with the size of its
// arguments; held calls keep the file's text in memory.
type hugeCall struct {
	args int64
	held bool
	run  func(ctx context.Context, f *FS, t fs.Target) error
}

var hugeCalls = map[string]hugeCall{
	"edit": {len64("the one line", "THE EDITED LINE"), false, func(ctx context.Context, f *FS, t fs.Target) error {
		out, err := f.EditText(ctx, t, fs.EditRequest{Old: "the one line", New: "THE EDITED LINE"}, nil)
		if err == nil && (!out.Omitted || out.Replacements != 1) {
			err = fmt.Errorf("outcome %+v", out)
		}
		return err
	}},
	"write": {len64("replaced\n"), false, func(ctx context.Context, f *FS, t fs.Target) error {
		out, err := f.WriteText(ctx, t, "replaced\n", nil)
		if err == nil && (!out.Omitted || out.Before != nil) {
			err = fmt.Errorf("outcome %+v", out)
		}
		return err
	}},
	"replace all": {len64("padding", "PADDING"), true, func(ctx context.Context, f *FS, t fs.Target) error {
		return replaceAll(ctx, f, t, "PADDING", false)
	}},
	"lengthening replace all": {len64("padding", "PADDING PADDING PADDING"), true, func(ctx context.Context, f *FS, t fs.Target) error {
		return replaceAll(ctx, f, t, "PADDING PADDING PADDING", true)
	}},
}

func replaceAll(ctx context.Context, f *FS, t fs.Target, repl string, omitted bool) error {
	out, err := f.EditText(ctx, t, fs.EditRequest{Old: "padding", New: repl, ReplaceAll: true}, nil)
	if err == nil && (out.Omitted != omitted || out.Replacements == 0) {
		err = fmt.Errorf("outcome Omitted %v, %d replacements", out.Omitted, out.Replacements)
	}
	return err
}

func len64(args ...string) (n int64) {
	for _, a := range args {
		n += int64(len(a))
	}
	return n
}

// One edit or write call holds at most 64 MiB plus its arguments, whatever
// the size of the file: each call runs in a fresh child process (this test
// binary again), on a 1 GiB file, or for the worst edit still held in
// memory on a CRLF file of exactly maxHeldText bytes, and the child's peak
// RSS is checked. Under -race the race detector's shadow memory, which
// grows with the heap, puts the held calls above the bound: there only the
// streamed calls are checked.
func TestHugeFileMemory(t *testing.T) {
	if name := os.Getenv(hugeChild); name != "" {
		runHugeChild(t, name)
		return
	}
	if testing.Short() {
		t.Skip("writes a 1 GiB file")
	}
	if _, ok := peakrss.Self(); !ok {
		t.Skip("no VmHWM in /proc/self/status to measure a child's peak RSS")
	}
	_, root := fixture(t)
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(root, &sfs); err != nil {
		t.Fatal(err)
	}
	// The file, its staged replacement, and room to spare.
	if free := sfs.Bavail * uint64(sfs.Bsize); free < 3<<30 {
		t.Skipf("%s has %d MiB free; the test needs 3 GiB", root, free>>20)
	}
	big := filepath.Join(root, "big.txt")
	middle := writeLines(t, big, 1<<30, "\n")
	runHuge(t, "edit", big)
	file, err := os.Open(big)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 40)
	_, err = file.ReadAt(got, middle-10)
	file.Close()
	if want := hugeLine("\n")[70:] + "THE EDITED LINE we edit\n" + hugeLine("\n")[:6]; err != nil || string(got) != want {
		t.Errorf("around the edit: %q (%v), want %q", got, err, want)
	}
	runHuge(t, "write", big)
	if b, err := os.ReadFile(big); err != nil || string(b) != "replaced\n" {
		t.Errorf("after the write: %q (%v)", b, err)
	}
	held := filepath.Join(root, "held.txt")
	writeLines(t, held, maxHeldText, "\r\n")
	runHuge(t, "replace all", held)
	writeLines(t, held, maxHeldText, "\r\n")
	runHuge(t, "lengthening replace all", held)
}

// runHuge makes the call name on path in a child process and checks its
// peak RSS.
func runHuge(t *testing.T, name, path string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHugeFileMemory$")
	cmd.Env = append(os.Environ(), hugeChild+"="+name, hugeFile+"="+path)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("%s: child failed: %v\n%s", name, err, out)
	}
	// The child's own high-water mark: its rusage would also count the
	// parent's memory it was cloned from before the exec.
	_, report, ok := strings.Cut(string(out), hugeReport)
	peak, err := strconv.ParseInt(strings.TrimSpace(strings.SplitN(report, "\n", 2)[0]), 10, 64)
	if !ok || err != nil {
		t.Fatalf("%s: no peak RSS reported:\n%s", name, out)
	}
	t.Logf("%s of %d MiB: peak RSS %.1f MiB, %v", name, st.Size>>20, float64(peak)/(1<<20), elapsed.Round(time.Millisecond))
	call := hugeCalls[name]
	if limit := 64<<20 + call.args; peak >= limit && !(call.held && raceEnabled) {
		t.Errorf("%s of %d MiB: peak RSS %d bytes, want < %d", name, st.Size>>20, peak, limit)
	}
}

func runHugeChild(t *testing.T, name string) {
	call, ok := hugeCalls[name]
	if !ok {
		t.Fatalf("no call %q", name)
	}
	path := os.Getenv(hugeFile)
	f := NewUnconfined(filepath.Dir(path))
	if err := call.run(context.Background(), f, mustResolve(t, f, path)); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	peak, ok := peakrss.Self()
	if !ok {
		t.Fatal("no VmHWM in /proc/self/status")
	}
	fmt.Printf("%s%d\n", hugeReport, peak)
}

// hugeLine is the 80-byte line writeLines repeats.
func hugeLine(eol string) string {
	line := "000000 func example() { return \"hello\" } // padding"
	return line + strings.Repeat(".", 80-len(eol)-len(line)) + eol
}

// writeLines fills path with exactly size bytes of hugeLine, written in
// large blocks, with "the one line we edit" in the middle; it returns that
// line's offset.
func writeLines(t *testing.T, path string, size int64, eol string) int64 {
	t.Helper()
	line := hugeLine(eol)
	block := strings.Repeat(line, 4<<20/len(line))
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	middle := size / 2 / int64(len(line)) * int64(len(line))
	var written int64
	put := func(s string) {
		if _, err := file.WriteString(s); err != nil {
			t.Fatal(err)
		}
		written += int64(len(s))
	}
	for written < middle {
		put(block[:min(int64(len(block)), middle-written)])
	}
	put("the one line we edit" + eol)
	for written < size {
		put(block[:min(int64(len(block)), size-written)])
	}
	return middle
}
