//go:build linux || darwin

package fslocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gordis-run/gordis/plugins/fs"
)

// holdStaging opens path and locks it as a live writer does, until the
// test ends.
func holdStaging(t *testing.T, path string) {
	t.Helper()
	file, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	if err := unix.Flock(int(file.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

// leftover makes a staging directory named for nonce in dir, as a writer
// that died leaves it: with its staged file when content is not "", empty
// otherwise. It returns the directory's path.
func leftover(t *testing.T, dir, nonce, content string) string {
	t.Helper()
	stage := filepath.Join(dir, stagingPrefix+nonce)
	if err := os.Mkdir(stage, 0o700); err != nil {
		t.Fatal(err)
	}
	if content != "" {
		write(t, filepath.Join(stage, stagedFile), content, 0o600)
	}
	return stage
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func TestIsStagingName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{".gordis-staging-0123456789abcdef", true},
		{".gordis-staging-ffffffffffffffff", true},
		{".gordis-staging-0123456789ABCDEF", false},
		{".gordis-staging-0123456789abcde", false},
		{".gordis-staging-0123456789abcdef0", false},
		{".gordis-staging-0123456789abcdeg", false},
		{"gordis-staging-0123456789abcdef", false},
		{".gordis-staging-", false},
		{".a.txt.123.0123456789abcdef.tmpdir", false},
	} {
		if got := isStagingName(tc.name); got != tc.want {
			t.Errorf("isStagingName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if name := stagingPrefix + randomNonce(); !isStagingName(name) || len(name) != 32 {
		t.Errorf("a staging name %q is not recognised or not 32 bytes", name)
	}
}

// A 255-byte name (NAME_MAX) is created, replaced and edited: the staging
// names do not depend on it.
func TestLongNames(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		ctx := context.Background()
		tg := mustResolve(t, f, strings.Repeat("n", 251)+".txt")
		out, err := f.WriteText(ctx, tg, "one\n", nil)
		if err != nil || out.Operation != fs.OpCreate {
			t.Fatalf("create: %+v, %v", out, err)
		}
		if out, err = f.WriteText(ctx, tg, "two\n", nil); err != nil || out.Operation != fs.OpUpdate {
			t.Fatalf("replace: %+v, %v", out, err)
		}
		if _, err := f.EditText(ctx, tg, fs.EditRequest{Old: "two", New: "three"}, nil); err != nil {
			t.Fatalf("edit: %v", err)
		}
		if b, err := os.ReadFile(tg.Key); err != nil || string(b) != "three\n" {
			t.Errorf("file = %q, %v", b, err)
		}
		if left := leftovers(t, root); len(left) != 0 {
			t.Errorf("staging left behind: %v", left)
		}
	})
}

// Sweep removes what dead writers left and nothing else: not a live
// writer's directory, not a file or a symlink with a staging name, not
// what a symlink points to, not other entries in a staging-named
// directory.
func TestSweep(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(outside, stagedFile), "outside", 0o600)

	dead := leftover(t, root, "0000000000000001", "half a write")
	empty := leftover(t, root, "0000000000000002", "")
	live := leftover(t, root, "0000000000000003", "in progress")
	holdStaging(t, filepath.Join(live, stagedFile))
	file := filepath.Join(root, stagingPrefix+"0000000000000004")
	write(t, file, "a file, not a staging directory", 0o644)
	link := filepath.Join(root, stagingPrefix+"0000000000000005")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	crowded := leftover(t, root, "0000000000000006", "")
	write(t, filepath.Join(crowded, "other"), "not ours", 0o600)
	unshaped := filepath.Join(root, ".gordis-staging-notes")
	if err := os.Mkdir(unshaped, 0o755); err != nil {
		t.Fatal(err)
	}

	if err := Sweep(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		dead: false, empty: false,
		live: true, filepath.Join(live, stagedFile): true,
		file: true, link: true, filepath.Join(outside, stagedFile): true,
		filepath.Join(crowded, "other"): true, unshaped: true,
	} {
		if got := exists(t, path); got != want {
			t.Errorf("%s exists = %v after the sweep, want %v", path, got, want)
		}
	}
	if err := Sweep(context.Background(), filepath.Join(root, "missing")); err != nil {
		t.Errorf("sweep of a missing directory: %v", err)
	}
}

// A sweep stops when its context ends, before it reads the directory or
// between two batches of names.
func TestSweepHonoursContext(t *testing.T) {
	root := t.TempDir()
	dead := leftover(t, root, "0000000000000001", "dead")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sweep(cancelled, root); !errors.Is(err, context.Canceled) || !exists(t, dead) {
		t.Errorf("cancelled sweep: %v, leftover kept %v", err, exists(t, dead))
	}
	for i := range 2 * sweepBatch {
		write(t, filepath.Join(root, fmt.Sprint(i)), "", 0o644)
	}
	if _, _, err := sweepOf(flipAt(2), root); !errors.Is(err, context.Canceled) {
		t.Errorf("sweep cancelled after its first batch: %v", err)
	}
}

// Another program holding the directory under an exclusive flock stalls
// a write's setup only until the write's context ends.
func TestSetupLockHonoursContext(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		dir, err := os.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		defer dir.Close()
		if err := unix.Flock(int(dir.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		tg := mustResolve(t, f, "a.txt")
		_, err = f.WriteText(ctx, tg, "x", nil)
		wantFsErr(t, err, fs.CodeAborted, "write aborted")
		if exists(t, tg.Key) || len(leftovers(t, root)) != 0 {
			t.Errorf("an aborted setup left %v, file created %v", leftovers(t, root), exists(t, tg.Key))
		}
	})
}

// The first write or edit into a directory sweeps it; later ones do not
// read it again unless that sweep removed something.
func TestWriteSweepsItsDirectory(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		ctx := context.Background()
		dir := filepath.Join(root, "sub")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "a.txt"), "a", 0o644)
		tg := mustResolve(t, f, "sub/a.txt")
		writeOrEdit := []func() error{
			func() error { _, err := f.WriteText(ctx, tg, "b", nil); return err },
			func() error {
				_, err := f.EditText(ctx, tg, fs.EditRequest{Old: "b", New: "a"}, nil)
				return err
			},
		}
		// Each step may leave a leftover as a crash would, then writes or
		// edits once. The sweeps of steps 0 and 1 remove one, so the next
		// write sweeps again; step 2's finds the directory clean and is the
		// last, so step 3's leftover stays (until a provider starts).
		for i, step := range []struct {
			crash    bool
			wantLeft int
		}{{true, 0}, {true, 0}, {false, 0}, {true, 1}} {
			if step.crash {
				leftover(t, dir, fmt.Sprintf("%016x", i+1), "dead")
			}
			if err := writeOrEdit[i%2](); err != nil {
				t.Fatal(err)
			}
			if left := leftovers(t, dir); len(left) != step.wantLeft {
				t.Errorf("step %d: leftovers %v, want %d", i, left, step.wantLeft)
			}
		}
		if err := Sweep(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
		if left := leftovers(t, dir); len(left) != 0 {
			t.Errorf("after Sweep: %v", left)
		}
	})
}

// A sweep that fails (here on a staging-shaped directory whose "data" is
// a directory) is not repeated by the next write: it would fail again,
// and cost every write a read of the directory.
func TestFailedSweepIsNotRepeated(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		odd := leftover(t, root, "0000000000000001", "")
		if err := os.Mkdir(filepath.Join(odd, stagedFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := Sweep(context.Background(), root); err == nil {
			t.Fatal("a sweep over a directory named data succeeded")
		}
		tg := mustResolve(t, f, "a.txt")
		if _, err := f.WriteText(context.Background(), tg, "1", nil); err != nil { // sweeps, fails
			t.Fatal(err)
		}
		dead := leftover(t, root, "0000000000000002", "dead")
		if _, err := f.WriteText(context.Background(), tg, "2", nil); err != nil { // does not sweep
			t.Fatal(err)
		}
		if !exists(t, dead) || !exists(t, odd) {
			t.Errorf("the second write swept again")
		}
	})
}

// Writers and sweeps race on one directory: no write fails, every file
// holds what was last written to it, and nothing is left once they stop.
// The sweeps run without pause. Without the lock on the staged file they
// remove live staging directories; without the setup lock on the parent
// they remove fresh ones between their mkdir and their lock; either way
// writes fail.
func TestSweepRacesWriters(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		ctx := context.Background()
		const writers, writes = 4, 60
		stop := make(chan struct{})
		var sweeps sync.WaitGroup
		sweeps.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := sweepOf(context.Background(), root); err != nil {
					t.Error(err)
				}
			}
		})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				tg := mustResolve(t, f, fmt.Sprintf("w%d.txt", w))
				for i := range writes {
					if _, err := f.WriteText(ctx, tg, fmt.Sprint(i), nil); err != nil {
						t.Errorf("writer %d, write %d: %v", w, i, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		sweeps.Wait()
		for w := range writers {
			if b, err := os.ReadFile(filepath.Join(root, fmt.Sprintf("w%d.txt", w))); err != nil || string(b) != fmt.Sprint(writes-1) {
				t.Errorf("w%d.txt = %q, %v", w, b, err)
			}
		}
		if left := leftovers(t, root); len(left) != 0 {
			t.Errorf("staging left behind: %v", left)
		}
	})
}

// Staging directories, live or dead, are not listed; a file that only
// has such a name is.
func TestListHidesStaging(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		write(t, filepath.Join(root, "a.txt"), "a", 0o644)
		leftover(t, root, "0000000000000001", "dead")
		live := leftover(t, root, "0000000000000002", "live")
		holdStaging(t, filepath.Join(live, stagedFile))
		lookalike := stagingPrefix + "0000000000000003"
		write(t, filepath.Join(root, lookalike), "a file", 0o644)
		entries, err := f.ListDir(context.Background(), mustResolve(t, f, "."))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name)
		}
		slices.Sort(names)
		if want := []string{lookalike, "a.txt"}; !slices.Equal(names, want) {
			t.Errorf("listed %q, want %q", names, want)
		}
	})
}

// A replacement keeps the file's extended attributes, for write and edit.
func TestReplaceKeepsXattrs(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		path := filepath.Join(root, "a.txt")
		write(t, path, "one", 0o644)
		if err := unix.Setxattr(path, "user.gordis.note", []byte("kept"), 0); err != nil {
			if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EPERM) {
				t.Skipf("%s takes no user xattrs: %v", root, err)
			}
			t.Fatal(err)
		}
		if err := unix.Setxattr(path, "user.gordis.empty", nil, 0); err != nil {
			t.Fatal(err)
		}
		tg := mustResolve(t, f, path)
		check := func(after string) {
			t.Helper()
			buf := make([]byte, 16)
			n, err := unix.Getxattr(path, "user.gordis.note", buf)
			if err != nil || string(buf[:n]) != "kept" {
				t.Errorf("after %s: user.gordis.note = %q, %v", after, buf[:max(n, 0)], err)
			}
			if n, err := unix.Getxattr(path, "user.gordis.empty", buf); err != nil || n != 0 {
				t.Errorf("after %s: user.gordis.empty = %d bytes, %v", after, n, err)
			}
		}
		writeThenEdit(t, f, tg, check)
	})
}

// A replacement keeps the file's owner and group when the writer may give
// them (root here); a create belongs to the writer.
func TestReplaceKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root may give a file to another user")
	}
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		path := filepath.Join(root, "a.txt")
		write(t, path, "one", 0o640)
		if err := os.Chown(path, 65534, 65533); err != nil {
			t.Fatal(err)
		}
		tg := mustResolve(t, f, path)
		owner := func(after string) {
			t.Helper()
			var st syscall.Stat_t
			if err := syscall.Stat(path, &st); err != nil {
				t.Fatal(err)
			}
			if st.Uid != 65534 || st.Gid != 65533 || st.Mode&0o7777 != 0o640 {
				t.Errorf("after %s: owner %d:%d, mode %o; want 65534:65533, 640", after, st.Uid, st.Gid, st.Mode&0o7777)
			}
		}
		writeThenEdit(t, f, tg, owner)
		created := mustResolve(t, f, "b.txt")
		if _, err := f.WriteText(context.Background(), created, "new", nil); err != nil {
			t.Fatal(err)
		}
		var st syscall.Stat_t
		if err := syscall.Stat(created.Key, &st); err != nil || st.Uid != 0 {
			t.Errorf("a created file belongs to uid %d (%v), want the writer's 0", st.Uid, err)
		}
	})
}

// foreignEnv names, for the test binary re-run as uid 65534, a file that
// root owns and anyone may write.
const foreignEnv = "GORDIS_FSLOCAL_FOREIGN"

// A user who may write another user's file replaces it although it cannot
// give the new file to its owner: the refused chown is left out, the
// extended attributes are still kept.
func TestReplaceOthersFile(t *testing.T) {
	if path := os.Getenv(foreignEnv); path != "" {
		f := NewUnconfined(filepath.Dir(path))
		if _, err := f.WriteText(context.Background(), mustResolve(t, f, path), "mine", nil); err != nil {
			t.Fatal(err)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("only root can make a file of another user's for this user")
	}
	dir := traversableDir(t)
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(shared, "root.txt")
	write(t, path, "root's", 0o666)
	if err := unix.Setxattr(path, "user.gordis.note", []byte("kept"), 0); err != nil {
		t.Skipf("%s takes no user xattrs: %v", dir, err)
	}
	runAsNobody(t, dir, "TestReplaceOthersFile", foreignEnv+"="+path)
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := unix.Getxattr(path, "user.gordis.note", buf)
	if b, _ := os.ReadFile(path); string(b) != "mine" || st.Uid != 65534 || st.Mode&0o777 != 0o666 || err != nil || string(buf[:n]) != "kept" {
		t.Errorf("replaced file: %q, owner %d, mode %o, user.gordis.note %q (%v)", b, st.Uid, st.Mode&0o777, buf[:max(n, 0)], err)
	}
}

// Root may replace a read-only file, as it may open it for writing; the
// mode stays. (TestPermissions checks the refusal for other users.)
func TestRootReplacesReadOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root")
	}
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		path := filepath.Join(root, "ro.txt")
		write(t, path, "one", 0o444)
		writeThenEdit(t, f, mustResolve(t, f, path), func(after string) {
			t.Helper()
			if mode(t, path) != 0o444 {
				t.Errorf("after %s: mode %v, want -r--r--r--", after, mode(t, path))
			}
		})
	})
}

// writeThenEdit replaces the file "one" at tg with "two" by a write, then
// with "three" by an edit, and calls check after each.
func writeThenEdit(t *testing.T, f *FS, tg fs.Target, check func(after string)) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.WriteText(ctx, tg, "two", nil); err != nil {
		t.Fatal(err)
	}
	check("write")
	if _, err := f.EditText(ctx, tg, fs.EditRequest{Old: "two", New: "three"}, nil); err != nil {
		t.Fatal(err)
	}
	check("edit")
	if b, err := os.ReadFile(tg.Key); err != nil || string(b) != "three" {
		t.Errorf("file = %q, %v", b, err)
	}
}

// An edit whose file is replaced by another process between its read and
// its rename (or whose directory is swapped, so that another file is there)
// is refused as stale, held or streamed, and leaves the other file as it
// is: its result was made of bytes that are no longer the file's.
func TestEditOfReplacedFileIsStale(t *testing.T) {
	defer func() { beforeRename = nil }()
	for name, cfg := range map[string]editConfig{"held": defaultEdit, "streamed": {held: 1, chunk: 4}} {
		t.Run(name, func(t *testing.T) {
			eachProvider(t, func(t *testing.T, f *FS, root string) {
				target := filepath.Join(root, "a.txt")
				write(t, target, "one\n", 0o644)
				tg := mustResolve(t, f, target)
				beforeRename = func(string) error {
					write(t, filepath.Join(root, "other"), "other\n", 0o644)
					return os.Rename(filepath.Join(root, "other"), target)
				}
				_, err := f.editText(context.Background(), tg, fs.EditRequest{Old: "one", New: "two"}, nil, cfg)
				wantFsErr(t, err, fs.CodeStaleVersion, `cannot edit "`+tg.Path+`": file changed since it was read`)
				if got, _ := os.ReadFile(target); string(got) != "other\n" {
					t.Errorf("%s = %q, want the other process's file", target, got)
				}
				if left := leftovers(t, root); len(left) != 0 {
					t.Errorf("staging left behind: %v", left)
				}
			})
		})
	}
}
