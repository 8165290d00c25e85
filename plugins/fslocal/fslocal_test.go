package fslocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// fixture returns a provider rooted at a fresh real directory.
func fixture(t *testing.T) (*FS, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return NewUnconfined(root), root
}

// eachProvider runs test on an unconfined and on a confined provider, each
// on a fresh workspace root (a real path).
func eachProvider(t *testing.T, test func(t *testing.T, f *FS, root string)) {
	for _, name := range [...]string{"unconfined", "confined"} {
		t.Run(name, func(t *testing.T) {
			f, root := fixture(t)
			if name == "confined" {
				f = confined(t, Config{Cwd: root})
			}
			test(t, f, root)
		})
	}
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func mustResolve(t *testing.T, f *FS, path string) fs.Target {
	t.Helper()
	tg, err := f.Resolve(context.Background(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func wantFsErr(t *testing.T, err error, code, msg string) {
	t.Helper()
	var fe *fs.Error
	if !errors.As(err, &fe) || fe.Code != code || fe.Message != msg {
		t.Fatalf("error = %#v, want %s %q", err, code, msg)
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// leftovers lists staging directories in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if isStagingName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestNewDefaultsToProcessCwd(t *testing.T) {
	wd, _ := os.Getwd()
	if got := NewUnconfined("").Cwd(); got != wd {
		t.Errorf("NewUnconfined(\"\").Cwd() = %q, want %q", got, wd)
	}
	if got := NewUnconfined("rel").Cwd(); got != filepath.Join(wd, "rel") {
		t.Errorf("NewUnconfined(\"rel\").Cwd() = %q", got)
	}
}

// §4 decisions: what upstream leaked raw is mapped, never raw.
func TestResolveFailuresAreMapped(t *testing.T) {
	f, root := fixture(t)
	if err := os.Symlink("loop", filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct{ path, code, msg string }{
		{"loop", fs.CodeIO, `cannot resolve "` + root + `/loop": too many levels of symbolic links`},
		{"loop/x.txt", fs.CodeIO, `cannot resolve "` + root + `/loop/x.txt": too many levels of symbolic links`},
		{"a\x00b", fs.CodeIO, `cannot resolve "` + root + `/a\x00b": path contains a NUL byte`},
	} {
		_, err := f.Resolve(ctx, tc.path, "")
		wantFsErr(t, err, tc.code, tc.msg)
	}
}

func TestOSErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		err        error
		code, tail string
	}{
		{syscall.EACCES, fs.CodePermission, "permission denied"},
		{&os.PathError{Op: "open", Path: "/x", Err: syscall.EPERM}, fs.CodePermission, "operation not permitted"},
		{&os.PathError{Op: "stat", Path: "/x", Err: syscall.ELOOP}, fs.CodeIO, "too many levels of symbolic links"},
		{syscall.ENOSPC, fs.CodeIO, "no space left on device"},
		{syscall.EROFS, fs.CodeIO, "read-only file system"},
		{errors.New("opaque"), fs.CodeIO, "input/output error"},
	} {
		e := osError("write", "/w/a.txt", tc.err)
		if e.Code != tc.code || e.Message != `cannot write "/w/a.txt": `+tc.tail || !errors.Is(e, tc.err) {
			t.Errorf("osError(%v) = %s %q", tc.err, e.Code, e.Message)
		}
	}
}

// a pre-existing staging path is never clobbered, and the target is
// not created. The foreign staging directory is live (its file locked), so
// the sweep of the first write keeps it.
func TestStagingCollision(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		defer func(old func() string) { stagingNonce = old }(stagingNonce)
		stagingNonce = func() string { return "0123456789abcdef" }
		stage := filepath.Join(root, stagingPrefix+"0123456789abcdef")
		if err := os.Mkdir(stage, 0o700); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(stage, stagedFile), "someone else's", 0o600)
		holdStaging(t, filepath.Join(stage, stagedFile))

		tg := mustResolve(t, f, "a.txt")
		_, err := f.WriteText(context.Background(), tg, "x", nil)
		wantFsErr(t, err, fs.CodeIO, `cannot write "`+tg.Path+`": file exists`)
		if _, err := os.Lstat(tg.Key); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("target created despite the collision: %v", err)
		}
		if b, err := os.ReadFile(filepath.Join(stage, stagedFile)); err != nil || string(b) != "someone else's" {
			t.Errorf("foreign staging file clobbered: %q, %v", b, err)
		}
	})
}

// A failure (or cancellation) just before the rename leaves the original
// byte-identical and no staging directory behind.
func TestFailureBeforeRename(t *testing.T) {
	f, root := fixture(t)
	defer func() { beforeRename = nil }()
	path := filepath.Join(root, "a.txt")
	const orig = "line one\r\nline two\r\n"

	for _, tc := range []struct {
		name string
		hook func(cancel context.CancelFunc) error
		code string
		tail string
	}{
		{"io error", func(context.CancelFunc) error { return syscall.EIO }, fs.CodeIO, "input/output error"},
		{"disk full", func(context.CancelFunc) error { return syscall.ENOSPC }, fs.CodeIO, "no space left on device"},
		{"cancelled", func(cancel context.CancelFunc) error { cancel(); return nil }, fs.CodeAborted, ""},
	} {
		for _, verb := range []string{"write", "edit"} {
			t.Run(tc.name+"/"+verb, func(t *testing.T) {
				write(t, path, orig, 0o644)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				beforeRename = func(string) error { return tc.hook(cancel) }
				tg := mustResolve(t, f, path)
				var err error
				if verb == "write" {
					_, err = f.WriteText(ctx, tg, "replaced", nil)
				} else {
					_, err = f.EditText(ctx, tg, fs.EditRequest{Old: "one", New: "1"}, nil)
				}
				msg := verb + " aborted"
				if tc.tail != "" {
					msg = `cannot ` + verb + ` "` + tg.Path + `": ` + tc.tail
				}
				wantFsErr(t, err, tc.code, msg)
				if b, _ := os.ReadFile(path); string(b) != orig {
					t.Errorf("original changed: %q", b)
				}
				if left := leftovers(t, root); len(left) != 0 {
					t.Errorf("staging left behind: %v", left)
				}
				if n := f.locks.held(); n != 0 {
					t.Errorf("%d locks leaked", n)
				}
			})
		}
	}
}

// R-046 port decision: a non-UTF-8 name is shown with U+FFFD and typed by a
// real stat of the raw name. R-047: a child that cannot be stat'ed fails
// the whole listing.
func TestListDirNames(t *testing.T) {
	f, root := fixture(t)
	ctx := context.Background()
	write(t, filepath.Join(root, "bad\xff\xfename.txt"), "abc", 0o644)
	entries, err := f.ListDir(ctx, mustResolve(t, f, "."))
	if err != nil || len(entries) != 1 {
		t.Fatalf("ListDir = %+v, %v", entries, err)
	}
	e := entries[0]
	if e.Name != "bad\uFFFD\uFFFDname.txt" || e.Type != fs.TypeFile || e.Size != 3 || e.Version == "" {
		t.Errorf("entry = %+v", e)
	}
	if e.Target.Path != root+"/bad\uFFFD\uFFFDname.txt" || e.Target.Key != root+"/bad\xff\xfename.txt" {
		t.Errorf("target = %+v", e.Target)
	}
	if text, err := f.ReadText(ctx, e.Target); err != nil || text != "abc" {
		t.Errorf("reading the listed child = %q, %v", text, err)
	}

	if err := os.Symlink("loop", filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	_, err = f.ListDir(ctx, mustResolve(t, f, "."))
	wantFsErr(t, err, fs.CodeIO, `cannot list "`+root+`/loop": too many levels of symbolic links`)
}

// children of a directory listed through a symlink keep the display
// spelling but take keys from the parent's real path.
func TestListDirThroughLink(t *testing.T) {
	f, root := fixture(t)
	if err := os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "real", "a.txt"), "a", 0o644)
	if err := os.Symlink("real", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	entries, err := f.ListDir(context.Background(), mustResolve(t, f, "link"))
	if err != nil || len(entries) != 2 {
		t.Fatalf("ListDir = %+v, %v", entries, err)
	}
	for _, e := range entries {
		if e.Target.Path != root+"/link/"+e.Name || e.Target.Key != root+"/real/"+e.Name {
			t.Errorf("%s: target %+v", e.Name, e.Target)
		}
	}
}

// the lock is FIFO, released on success and failure, and a waiter
// that is cancelled leaves the queue.
func TestLock(t *testing.T) {
	f, _ := fixture(t)
	ctx := context.Background()
	tg := mustResolve(t, f, "a.txt")
	write(t, tg.Key, "x", 0o644)

	// Released after success and after each kind of failure.
	f.WriteText(ctx, tg, "y", nil)
	f.WriteText(ctx, tg, "z", &fs.WriteIntent{Kind: fs.CreateIfAbsent})
	f.EditText(ctx, tg, fs.EditRequest{Old: "nope", New: "b"}, nil)
	f.EditText(ctx, mustResolve(t, f, "missing"), fs.EditRequest{Old: "a", New: "b"}, nil)
	if n := f.locks.held(); n != 0 {
		t.Fatalf("%d locks leaked", n)
	}

	// FIFO: writers queued in a known order take the lock in that order
	// (each records its turn while it holds the lock: after the write
	// returns, the next writer may already have finished too).
	if err := f.locks.lock(ctx, tg.Key); err != nil {
		t.Fatal(err)
	}
	var order []string // appended only under the key's lock
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			if err := f.locks.lock(ctx, tg.Key); err != nil {
				t.Error(err)
				return
			}
			order = append(order, fmt.Sprint(i))
			f.locks.unlock(tg.Key)
		})
		waitQueue(t, &f.locks, tg.Key, i+1)
	}
	// A cancelled waiter leaves the queue without disturbing it.
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error)
	go func() { _, err := f.WriteText(cctx, tg, "cancelled", nil); errc <- err }()
	waitQueue(t, &f.locks, tg.Key, 6)
	cancel()
	wantFsErr(t, <-errc, fs.CodeAborted, "write aborted")
	waitQueue(t, &f.locks, tg.Key, 5)

	f.locks.unlock(tg.Key)
	wg.Wait()
	if got := strings.Join(order, ""); got != "01234" {
		t.Errorf("writers ran in order %q, want 01234", got)
	}
	if n := f.locks.held(); n != 0 {
		t.Errorf("%d locks leaked", n)
	}
}

func waitQueue(t *testing.T, k *keyedMutex, key string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		k.mu.Lock()
		got := len(k.waiters[key])
		k.mu.Unlock()
		if got == n {
			return
		}
	}
	t.Fatalf("queue never reached %d waiters", n)
}

// Without the lock the guarded race below lets several writers through:
// the hook widens the window between the version check and the rename.
func TestGuardedRaceWideWindow(t *testing.T) {
	f, root := fixture(t)
	defer func() { beforeRename = nil }()
	beforeRename = func(string) error { time.Sleep(2 * time.Millisecond); return nil }
	path := filepath.Join(root, "a.txt")
	for round := range 20 {
		write(t, path, "x", 0o644)
		tg := mustResolve(t, f, path)
		info, _ := f.Stat(context.Background(), tg)
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, stale := 0, 0
		for i := range 4 {
			wg.Go(func() {
				var err error
				if i%2 == 0 {
					_, err = f.WriteText(context.Background(), tg, "w", &fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: info.Version})
				} else {
					_, err = f.EditText(context.Background(), tg, fs.EditRequest{Old: "x", New: "e"}, &fs.EditIntent{Version: info.Version})
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, fs.ErrStaleVersion):
					stale++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if wins != 1 || stale != 3 {
			t.Fatalf("round %d: %d wins, %d stale; want 1 and 3", round, wins, stale)
		}
	}
}

// a cancellation between the chunks of a large write (the 5th
// checkpoint of a create is the one before its 3rd chunk) leaves
// neither the file nor the staging directory.
func TestCancelBetweenChunks(t *testing.T) {
	f, root := fixture(t)
	tg := mustResolve(t, f, "big.txt")
	ctx := flipAt(5)
	_, err := f.WriteText(ctx, tg, strings.Repeat("x", 3*writeChunk), nil)
	wantFsErr(t, err, fs.CodeAborted, "write aborted")
	if n := ctx.calls.Load(); n != 5 {
		t.Errorf("stopped at checkpoint %d, want 5", n)
	}
	if _, err := os.Lstat(tg.Key); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an aborted create left a file: %v", err)
	}
	if left := leftovers(t, root); len(left) != 0 {
		t.Errorf("staging left behind: %v", left)
	}
}

func TestStreamTextFromErrors(t *testing.T) {
	f, root := fixture(t)
	ctx := context.Background()
	path := filepath.Join(root, "a.txt")
	write(t, path, "\xEF\xBB\xBFabc", 0o644)
	tg := mustResolve(t, f, path)
	info, _ := f.Stat(ctx, tg)
	for _, off := range []int64{-1, 4} {
		_, err := f.StreamTextFrom(ctx, tg, info.Version, off)
		wantFsErr(t, err, fs.CodeIO, fmt.Sprintf(`cannot read "%s": offset %d is outside the text`, tg.Path, off))
	}
	rc, err := f.StreamTextFrom(ctx, tg, info.Version, 3)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(rc); err != nil || len(b) != 0 {
		t.Errorf("stream at the end = %q, %v", b, err)
	}
	rc.Close()
	write(t, path, strings.Repeat("a", 100)+"\x00", 0o644)
	info, _ = f.Stat(ctx, tg)
	_, err = f.StreamTextFrom(ctx, tg, info.Version, 50)
	wantFsErr(t, err, fs.CodeNotText, `cannot read "`+tg.Path+`": binary file`)
	_, err = f.StreamTextFrom(canceledCtx(), tg, info.Version, 0)
	wantFsErr(t, err, fs.CodeAborted, "read aborted")
}

func canceledCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
