//go:build unix

package fslocal

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// walkTree builds the walk's fixture under root: nested directories, names
// whose byte order differs from their case-folded order, symlinks to a
// file, a directory and nowhere, a FIFO, and a staging directory.
func walkTree(t *testing.T, root string) {
	t.Helper()
	for _, dir := range []string{"a/B", "a/d", "z", stagingPrefix + "0123456789abcdef"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{"A.txt", "_x.txt", "a/B/y.txt", "a/a.txt", "a/z.txt", "a.txt", "b.txt",
		stagingPrefix + "0123456789abcdef/staged"} {
		write(t, filepath.Join(root, file), "text of "+file+"\n", 0o644)
	}
	mustLink(t, "a.txt", filepath.Join(root, "link-file"))
	mustLink(t, "a", filepath.Join(root, "link-dir"))
	mustLink(t, "missing", filepath.Join(root, "link-dangling"))
	if err := syscall.Mkfifo(filepath.Join(root, "a/d/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// walkSeq walks target and returns the visits as "path:type" lines; skip
// names the paths whose calls return SkipDir, all the path that returns
// SkipAll.
func walkSeq(t *testing.T, f *FS, target string, skip map[string]error) (string, error) {
	t.Helper()
	var seq []string
	err := f.Walk(context.Background(), mustResolve(t, f, target), func(e fs.WalkEntry) error {
		seq = append(seq, e.Path()+":"+string(e.Type()))
		return skip[e.Path()]
	})
	return strings.Join(seq, "\n"), err
}

func TestWalkOrder(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		walkTree(t, root)
		got, err := walkSeq(t, f, root, nil)
		want := strings.Join([]string{
			":directory",
			"A.txt:file",
			"_x.txt:file",
			"a:directory",
			"a/B:directory",
			"a/B/y.txt:file",
			"a/a.txt:file",
			"a/d:directory",
			"a/d/fifo:other",
			"a/z.txt:file",
			"a.txt:file",
			"b.txt:file",
			"link-dangling:symlink",
			"link-dir:symlink",
			"link-file:symlink",
			"z:directory",
		}, "\n")
		if err != nil || got != want {
			t.Fatalf("walk = %v\n%s\nwant\n%s", err, got, want)
		}

		got, err = walkSeq(t, f, root, map[string]error{"a": fs.SkipDir, "a.txt": fs.SkipDir})
		want = ":directory\nA.txt:file\n_x.txt:file\na:directory\na.txt:file\nb.txt:file\n" +
			"link-dangling:symlink\nlink-dir:symlink\nlink-file:symlink\nz:directory"
		if err != nil || got != want {
			t.Errorf("SkipDir: walk = %v\n%s\nwant\n%s", err, got, want)
		}
		got, err = walkSeq(t, f, root, map[string]error{"a/B/y.txt": fs.SkipAll})
		want = ":directory\nA.txt:file\n_x.txt:file\na:directory\na/B:directory\na/B/y.txt:file"
		if err != nil || got != want {
			t.Errorf("SkipAll: walk = %v\n%s\nwant\n%s", err, got, want)
		}
		if got, err = walkSeq(t, f, root, map[string]error{"": fs.SkipDir}); err != nil || got != ":directory" {
			t.Errorf("SkipDir on the target: walk = %v %q", err, got)
		}
		stop := errors.New("stop")
		if got, err = walkSeq(t, f, root, map[string]error{"a/a.txt": stop}); err != stop || !strings.HasSuffix(got, "a/a.txt:file") {
			t.Errorf("an error from fn: walk = %v\n%s", err, got)
		}

		// A target is typed through symlinks, as Resolve followed them;
		// a file target is visited alone.
		got, err = walkSeq(t, f, filepath.Join(root, "link-dir"), nil)
		if want := ":directory\nB:directory\nB/y.txt:file\na.txt:file\nd:directory\nd/fifo:other\nz.txt:file"; err != nil || got != want {
			t.Errorf("walk of a link to a directory = %v\n%s\nwant\n%s", err, got, want)
		}
		for _, file := range []string{"a/a.txt", "link-file"} {
			if got, err := walkSeq(t, f, filepath.Join(root, file), nil); err != nil || got != ":file" {
				t.Errorf("walk of %s = %v %q, want the file alone", file, err, got)
			}
		}
		if got, err := walkSeq(t, f, filepath.Join(root, "a/d/fifo"), nil); err != nil || got != ":other" {
			t.Errorf("walk of a FIFO = %v %q, want it alone", err, got)
		}
		for _, missing := range []string{"nope", "link-dangling"} {
			path := filepath.Join(root, missing)
			_, err := walkSeq(t, f, path, nil)
			wantFsErr(t, err, fs.CodeNotFound, `cannot list "`+path+`": not found`)
		}
	})
}

// TestWalkEntries checks what entries report and open: files their bytes
// as stored, anything else refused without blocking, sizes and times as
// lstat says, and Open working after the walk, from another goroutine.
func TestWalkEntries(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		walkTree(t, root)
		write(t, filepath.Join(root, "bin.dat"), "\x00\xff raw", 0o644)
		entries := map[string]fs.WalkEntry{}
		infos := map[string]fs.EntryInfo{}
		err := f.Walk(context.Background(), mustResolve(t, f, root), func(e fs.WalkEntry) error {
			info, err := e.Info()
			if err != nil {
				return err
			}
			entries[e.Path()], infos[e.Path()] = e, info
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]int64{"": -1, "a": -1, "a/a.txt": 16, "link-file": -1, "a/d/fifo": -1, "bin.dat": 6} {
			fi, err := os.Lstat(filepath.Join(root, path))
			if err != nil {
				t.Fatal(err)
			}
			if got := infos[path]; got.Size != want || !got.ModTime.Equal(fi.ModTime()) {
				t.Errorf("Info(%q) = %v, want size %d, time %v", path, got, want, fi.ModTime())
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for path, want := range map[string]string{"a/a.txt": "text of a/a.txt\n", "bin.dat": "\x00\xff raw"} {
				rc, err := entries[path].Open(context.Background())
				if err != nil {
					t.Errorf("Open(%s): %v", path, err)
					continue
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || string(got) != want {
					t.Errorf("Open(%s) read %q, %v; want %q", path, got, err, want)
				}
			}
		}()
		<-done
		for _, path := range []string{"", "a", "link-file", "link-dangling", "a/d/fifo"} {
			_, err := entries[path].Open(context.Background())
			wantFsErr(t, err, fs.CodeNotRegularFile, `cannot read "`+strings.TrimSuffix(filepath.Join(root, path), "/")+`": not a regular file`)
		}

		// Swapped after the walk: a symlink or a FIFO in place of a file is
		// refused (the FIFO without blocking), a removed file is missing.
		secret := filepath.Join(t.TempDir(), "secret")
		write(t, secret, "secret", 0o644)
		for path, swap := range map[string]func(string) error{
			"A.txt":  func(p string) error { return os.Symlink(secret, p) },
			"_x.txt": func(p string) error { return syscall.Mkfifo(p, 0o644) },
		} {
			p := filepath.Join(root, path)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := swap(p); err != nil {
				t.Fatal(err)
			}
			_, err := entries[path].Open(context.Background())
			wantFsErr(t, err, fs.CodeNotRegularFile, `cannot read "`+p+`": not a regular file`)
		}
		if err := os.Remove(filepath.Join(root, "b.txt")); err != nil {
			t.Fatal(err)
		}
		_, err = entries["b.txt"].Open(context.Background())
		wantFsErr(t, err, fs.CodeNotFound, `cannot read "`+filepath.Join(root, "b.txt")+`": not found`)
	})
}

// TestWalkCancel cancels a walk of 20,000 entries part-way: it returns
// FS_ABORTED at the next entry.
func TestWalkCancel(t *testing.T) {
	_, root := fixture(t)
	manyFiles(t, root, 20, 1000)
	for name, f := range map[string]*FS{"unconfined": NewUnconfined(root), "confined": confined(t, Config{Cwd: root})} {
		t.Run(name, func(t *testing.T) { walkCancel(t, f, root) })
	}
}

func walkCancel(t *testing.T, f *FS, root string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var visits int
	var cancelled time.Time
	err := f.Walk(ctx, mustResolve(t, f, root), func(e fs.WalkEntry) error {
		if visits++; visits == 5000 {
			cancel()
			cancelled = time.Now()
		}
		return nil
	})
	took := time.Since(cancelled)
	wantFsErr(t, err, fs.CodeAborted, "list aborted")
	if !errors.Is(err, context.Canceled) || visits != 5000 || took > 50*time.Millisecond {
		t.Errorf("cancelled walk: %v after %d visits, %v after the cancel", err, visits, took)
	}
	t.Logf("stopped %v after the cancel", took)

	// Cancelled from another goroutine, while the callback runs.
	ctx, cancel = context.WithCancel(context.Background())
	stopped := make(chan time.Time, 1)
	started := make(chan struct{})
	go func() {
		<-started
		stopped <- time.Now()
		cancel()
	}()
	visits = 0
	err = f.Walk(ctx, mustResolve(t, f, root), func(e fs.WalkEntry) error {
		if visits++; visits == 1 {
			close(started)
			<-ctx.Done()
		}
		return nil
	})
	if took := time.Since(<-stopped); fs.CodeOf(err) != fs.CodeAborted || took > 50*time.Millisecond {
		t.Errorf("walk cancelled from outside = %v after %d visits, %v after the cancel", err, visits, took)
	}
	err = f.Walk(ctx, mustResolve(t, f, root), func(fs.WalkEntry) error {
		t.Error("a cancelled walk visited an entry")
		return nil
	})
	wantFsErr(t, err, fs.CodeAborted, "list aborted")
}

// manyFiles makes dirs directories of files small files each under root.
// The files are hard links of one: a walk sees regular files, and the
// fixture costs no inode per file on a busy machine.
func manyFiles(t testing.TB, root string, dirs, files int) {
	t.Helper()
	one := filepath.Join(root, "one.txt")
	if err := os.WriteFile(one, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for d := range dirs {
		dir := filepath.Join(root, "d"+strconv.Itoa(d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range files {
			if err := os.Link(one, filepath.Join(dir, "f"+strconv.Itoa(i)+".txt")); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestWalkPermissionDenied walks into a directory it may not read: the
// walk ends naming it. Root reads everything, so as root the test re-runs
// as nobody.
func TestWalkPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		if os.Getenv(unprivilegedEnv) != "" {
			t.Fatal("re-executed test still runs as root")
		}
		runAsNobody(t, traversableDir(t), "TestWalkPermissionDenied")
		return
	}
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		for _, dir := range []string{"a", "b"} {
			if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write(t, filepath.Join(root, "a/x.txt"), "x", 0o644)
		locked := filepath.Join(root, "a/locked")
		if err := os.Mkdir(locked, 0o000); err != nil {
			t.Fatal(err)
		}
		got, err := walkSeq(t, f, root, nil)
		wantFsErr(t, err, fs.CodePermission, `cannot list "`+locked+`": permission denied`)
		if want := ":directory\na:directory\na/locked:directory"; got != want {
			t.Errorf("visits before the failure:\n%s\nwant\n%s", got, want)
		}
		if got, err := walkSeq(t, f, root, map[string]error{"a/locked": fs.SkipDir}); err != nil || !strings.HasSuffix(got, "a/x.txt:file\nb:directory") {
			t.Errorf("walk skipping the locked directory = %v\n%s", err, got)
		}
		_, err = walkSeq(t, f, locked, nil)
		wantFsErr(t, err, fs.CodePermission, `cannot list "`+locked+`": permission denied`)
		write(t, filepath.Join(root, "b/secret.txt"), "s", 0o000)
		f.Walk(context.Background(), mustResolve(t, f, root), func(e fs.WalkEntry) error {
			if e.Path() == "b/secret.txt" {
				_, err := e.Open(context.Background())
				wantFsErr(t, err, fs.CodePermission, `cannot read "`+filepath.Join(root, "b/secret.txt")+`": permission denied`)
			}
			return nil
		})
	})
}

// TestWalkReadOnlyRoot walks a read-only root: a walk only reads.
func TestWalkReadOnlyRoot(t *testing.T) {
	j := newJail(t)
	got, err := walkSeq(t, j.f, j.docs, nil)
	if err != nil || got != ":directory\nguide.md:file" {
		t.Errorf("walk of the read-only root = %v %q", err, got)
	}
	// A target forged outside every root is refused before anything is read.
	err = j.f.Walk(context.Background(), fs.Target{Key: j.out, Path: j.out}, func(fs.WalkEntry) error {
		t.Error("visited outside")
		return nil
	})
	wantFsErr(t, err, fs.CodeSandboxDenied, `cannot list "`+j.out+`": outside the workspace "`+j.ws+`"`)
}

// BenchmarkWalk walks 10,000 files in 100 directories, confined, with the
// provider's Walker and with the seam's generic walk over the same
// provider (its Walker hidden).
func BenchmarkWalk(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	manyFiles(b, root, 100, 100)
	f, err := Open(Config{Cwd: root})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	tg := mustResolveB(b, f, root)
	for name, fsys := range map[string]fs.FileSystem{"Walker": f, "generic": seamOnly{f}} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				if err := fs.Walk(context.Background(), fsys, tg, func(fs.WalkEntry) error { n++; return nil }); err != nil {
					b.Fatal(err)
				}
				if n != 10_102 {
					b.Fatalf("%d entries, want 10,102", n)
				}
			}
		})
	}
}

// seamOnly hides every capability of a provider but the seam's core.
type seamOnly struct{ fs.FileSystem }

// BenchmarkWalkWide walks one directory of 50,000 files: its listing is
// held while it is visited, so the bytes per entry are what a directory
// of a million entries costs per name (names here are 5 to 10 bytes).
func BenchmarkWalkWide(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	manyFiles(b, root, 1, 50_000)
	f, err := Open(Config{Cwd: root})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	tg := mustResolveB(b, f, root)
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Walk(context.Background(), tg, func(fs.WalkEntry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
