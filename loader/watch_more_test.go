package loader_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gordis-run/gordis/loader"
	gordisrt "github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// openLogged opens text with cat's plugins under a root whose logs are
// recorded.
func openLogged(t *testing.T, cat func(testing.TB, *recorder) *loader.Catalog, text string) (*loader.Loader, *recorder, *runtimetest.Logs, string) {
	t.Helper()
	rec, logs := &recorder{}, runtimetest.NewLogs()
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), text)
	l, err := loader.Open(runtimetest.New(t, gordisrt.WithLogger(slog.New(logs))), file, cat(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, rec, logs, file
}

// watchLogged is openLogged, watching the file.
func watchLogged(t *testing.T, cat func(testing.TB, *recorder) *loader.Catalog, text string) (*loader.Loader, *recorder, *runtimetest.Logs, string) {
	t.Helper()
	l, rec, logs, file := openLogged(t, cat, text)
	if err := l.Watch(context.Background()); err != nil {
		t.Fatal(err)
	}
	return l, rec, logs, file
}

// logged waits up to 5 s for a record with message msg and returns its
// "error" attribute.
func logged(t *testing.T, logs *runtimetest.Logs, msg string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, r := range logs.Records() {
			if r.Message == msg {
				return r.Attrs["error"]
			}
		}
	}
	var got []string
	for _, r := range logs.Records() {
		got = append(got, r.Message)
	}
	t.Fatalf("no %q logged; got %q", msg, got)
	return ""
}

// A file removed and created again: the watcher reports the missing file,
// changes nothing, and applies the new file when it appears.
func TestWatchRemovedAndRecreated(t *testing.T) {
	l, rec, logs, file := watchLogged(t, plugins, "- {id: a, name: counter, config: {greeting: a}}\n")
	rec.take()
	a := l.Fiber("a")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if got := logged(t, logs, "config reload failed; the running plugins are unchanged"); !strings.Contains(got, "no such file or directory") {
		t.Fatalf("error = %q", got)
	}
	if l.Fiber("a") != a || a.State() != gordisrt.Active {
		t.Fatal("a changed when the file went away")
	}
	write(t, file, "- {id: a, name: counter, config: {greeting: b}}\n")
	waitFor(t, rec, "dispose counter a", "apply counter b 0")
}

// A reload that applies but where an entry fails says so: the running
// plugins did change.
func TestWatchLogsApplyFailure(t *testing.T) {
	_, rec, logs, file := watchLogged(t, failing, "- {id: a, name: counter, config: {greeting: a}}\n")
	rec.take()
	write(t, file, "- {id: a, name: counter, config: {greeting: b}}\n- {id: p, name: picky, config: {greeting: no}}\n")
	want := file + `:2:32: entry "p" (picky): greeting no refused`
	if got := logged(t, logs, "config reloaded, but entries failed to apply"); got != want {
		t.Fatalf("error = %q, want %q", got, want)
	}
	for _, r := range logs.Records() {
		if strings.Contains(r.Message, "unchanged") {
			t.Fatalf("logged %q after an apply", r.Message)
		}
	}
	waitFor(t, rec, "dispose counter a", "apply counter b 0")
}

// Close stops every watcher: no goroutine is left, and Watch after Close
// says ErrClosed.
func TestWatchLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	l, _, file := setup(t, "- {id: a, name: counter}\n")
	for range 3 {
		if err := l.Watch(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := l.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	write(t, file, "- {id: a, name: counter, config: {greeting: x}}\n")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Watch(context.Background()); !errors.Is(err, loader.ErrClosed) {
		t.Fatalf("Watch after Close: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// Watch racing Close: either Watch fails with ErrClosed or Close stops
// it; the race detector checks the WaitGroup's use.
func TestWatchRacingClose(t *testing.T) {
	for range 20 {
		l, _, _ := setup(t, "- {id: a, name: counter}\n")
		done := make(chan error, 1)
		go func() { done <- l.Watch(context.Background()) }()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil && !errors.Is(err, loader.ErrClosed) {
			t.Fatal(err)
		}
	}
}

// A config file that is a link to a file in another directory (a dotfiles
// checkout, say): a save of the target, where editors write it, reloads.
func TestWatchLinkToAnotherDirectory(t *testing.T) {
	dotfiles, conf := t.TempDir(), t.TempDir()
	target := write(t, filepath.Join(dotfiles, "gordis.yaml"), "- {id: a, name: counter, config: {greeting: a}}\n")
	link := filepath.Join(conf, "gordis.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	l, err := loader.Open(runtimetest.New(t), link, plugins(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Watch(context.Background()); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "apply counter a 0")
	tmp := filepath.Join(dotfiles, ".gordis.yaml.swp")
	write(t, tmp, "- {id: a, name: counter, config: {greeting: b}}\n")
	if err := os.Rename(tmp, target); err != nil {
		t.Fatal(err)
	}
	waitFor(t, rec, "dispose counter a", "apply counter b 0")
}

// A save between Open and Watch is applied at the watcher's first look,
// which compares the file with the one last loaded, not with the one
// Watch found.
func TestWatchSeesASaveBeforeIt(t *testing.T) {
	l, rec, file := setup(t, "- {id: a, name: counter, config: {greeting: a}}\n")
	rec.take()
	write(t, file, "- {id: a, name: counter, config: {greeting: b}}\n")
	if err := l.Watch(context.Background()); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(filepath.Dir(file), "other.txt"), "an event in the directory\n")
	waitFor(t, rec, "dispose counter a", "apply counter b 0")
}
