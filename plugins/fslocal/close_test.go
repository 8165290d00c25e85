package fslocal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/runtime"
)

// writeResult is what a WriteText run by writeAsync returned.
type writeResult struct {
	out *fs.WriteOutcome
	err error
}

// writeAsync runs WriteText of content to tg on another goroutine.
func writeAsync(f *FS, tg fs.Target, content string) <-chan writeResult {
	done := make(chan writeResult, 1)
	go func() {
		out, err := f.WriteText(context.Background(), tg, content, nil)
		done <- writeResult{out, err}
	}()
	return done
}

// heldWrite opens a confined provider on a fresh workspace holding a.txt
// ("old") and starts a WriteText of "new" there, which it holds just before
// the rename until release is called. The provider is closed at the end of
// the test, if the test did not close it.
func heldWrite(t *testing.T) (f *FS, tg fs.Target, held <-chan writeResult, release func()) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if f, err = Open(Config{Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	write(t, filepath.Join(dir, "a.txt"), "old", 0o644)
	tg = mustResolve(t, f, "a.txt")
	entered, gate := make(chan struct{}, 1), make(chan struct{})
	beforeRename = func(string) error {
		entered <- struct{}{}
		<-gate
		return nil
	}
	release = sync.OnceFunc(func() { close(gate) })
	t.Cleanup(func() { release(); beforeRename = nil })
	held = writeAsync(f, tg, "new")
	<-entered
	return f, tg, held, release
}

// wantClosed asserts the refusal of a call that met a closed provider: not
// a coded fs error, so the registry reports TOOL_UNAVAILABLE.
func wantClosed(t *testing.T, err error, verb, path string) {
	t.Helper()
	want := `cannot ` + verb + ` "` + path + `": the filesystem provider is closed`
	if err == nil || err.Error() != want || !errors.Is(err, ErrClosed) || !errors.Is(err, runtime.ErrServiceUnavailable) || fs.CodeOf(err) != "" {
		t.Fatalf("error = %#v (%v), want %q matching ErrClosed and runtime.ErrServiceUnavailable", err, err, want)
	}
}

// Close waits for a write in flight, which lands and reports its version;
// a call that arrives meanwhile is refused and changes nothing.
func TestCloseWaitsForCalls(t *testing.T) {
	f, tg, wrote, release := heldWrite(t)
	closed := make(chan error, 1)
	go func() { closed <- f.Close() }()
	for f.calls.state.Load()&closing == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err := f.EditText(context.Background(), tg, fs.EditRequest{Old: "old", New: "edited"}, nil)
	wantClosed(t, err, "edit", tg.Path)
	_, err = f.Resolve(context.Background(), "b.txt", "")
	wantClosed(t, err, "resolve", filepath.Join(filepath.Dir(tg.Key), "b.txt"))
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a write was in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	r := <-wrote
	if r.err != nil || r.out.Version == "" || strings.HasPrefix(string(r.out.Version), "missing:") {
		t.Fatalf("the write in flight: %+v, %v", r.out, r.err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tg.Key); string(b) != "new" {
		t.Fatalf("file holds %q, want the write's", b)
	}
	_, err = f.ReadText(context.Background(), tg)
	wantClosed(t, err, "read", tg.Path)
}

// Close stops waiting after closeWait. A write held past it still lands
// (its rename and directory fsync use handles of its own) and reports
// success, with the "missing:" version the policy treats as stale, since
// the new version cannot be read through the closed roots; a write that
// was waiting for the same file's lock meets the closed roots before it
// changes anything, and is refused as if it had come after Close.
func TestCloseBounded(t *testing.T) {
	defer func(d time.Duration) { closeWait = d }(closeWait)
	closeWait = 50 * time.Millisecond
	f, tg, first, release := heldWrite(t)
	second := writeAsync(f, tg, "second")
	for f.calls.state.Load() != 2 { // the second waits for the file's lock
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	if err := f.Close(); err == nil || err.Error() != "fslocal: closed with 2 calls still running after 50ms" {
		t.Fatalf("Close = %v, want the 2 calls it did not wait for", err)
	}
	if d := time.Since(start); d < closeWait || d > closeWait+time.Second {
		t.Fatalf("Close took %v with a call held, want about %v", d, closeWait)
	}
	release()
	r := <-first
	if r.err != nil || r.out.Version != fs.Version("missing:"+tg.Key) {
		t.Fatalf("the write held past Close: %+v, %v; want success with the missing version", r.out, r.err)
	}
	r = <-second
	wantClosed(t, r.err, "write", tg.Path)
	if b, _ := os.ReadFile(tg.Key); string(b) != "new" {
		t.Fatalf("file holds %q, want the first write's", b)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(tg.Key), stagingPrefix+"*")); len(m) != 0 {
		t.Fatalf("staging left behind: %v", m)
	}
}

// A walk's entry may be opened after the walk returned, while the provider
// is open: after Close that open is refused as any call is.
func TestWalkEntryOpenAfterClose(t *testing.T) {
	f, tg, _, release := heldWrite(t)
	release()
	var file fs.WalkEntry
	if err := f.Walk(context.Background(), mustResolve(t, f, filepath.Dir(tg.Key)), func(e fs.WalkEntry) error {
		if e.Path() == "a.txt" {
			file = e
		}
		return nil
	}); err != nil || file == nil {
		t.Fatalf("Walk: %v, a.txt entry %v", err, file)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := file.Open(context.Background())
	wantClosed(t, err, "read", tg.Path)
}

// BenchmarkCallGate is what every call pays to be waited for by Close: an
// admission and its end, from all CPUs at once.
func BenchmarkCallGate(b *testing.B) {
	var g callGate
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			err := g.enter("read", "a.txt")
			g.done("read", "a.txt", &err)
		}
	})
}
