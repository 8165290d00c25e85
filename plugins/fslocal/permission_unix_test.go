//go:build unix

package fslocal

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

// unprivilegedEnv marks the re-executed test binary.
const unprivilegedEnv = "GORDIS_FSLOCAL_UNPRIVILEGED"

// TestPermissions checks the EACCES mapping on the real filesystem. Root
// ignores mode bits, so under root the test binary re-runs this test as
// nobody (uid/gid 65534) from a copy it can execute; it skips only when the
// kernel refuses to switch users.
func TestPermissions(t *testing.T) {
	if os.Geteuid() != 0 {
		permissionCases(t)
		return
	}
	if os.Getenv(unprivilegedEnv) != "" {
		t.Fatal("re-executed test still runs as root")
	}
	runAsNobody(t, traversableDir(t), "TestPermissions")
}

// traversableDir is a t.TempDir that uid 65534 can reach.
func traversableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil { // t.TempDir is 0700
			t.Fatal(err)
		}
	}
	return dir
}

// runAsNobody re-runs the test named test as uid/gid 65534, with env
// added, from a copy of the test binary in dir (a traversableDir), and
// fails t unless it passes. It skips only when the kernel refuses to
// switch users.
func runAsNobody(t *testing.T, dir, test string, env ...string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "fslocal.test")
	copyFile(t, exe, bin)
	cmd := exec.Command(bin, "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), unprivilegedEnv+"=1", "HOME=/", "GOCOVERDIR="), env...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, started := err.(*exec.ExitError); !started {
			t.Skipf("cannot run as uid 65534: %v", err)
		}
		t.Fatalf("unprivileged run failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("unprivileged run did not pass:\n%s", out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// permissionCases runs as a user that mode bits apply to.
func permissionCases(t *testing.T) {
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		ctx := context.Background()
		locked := filepath.Join(root, "locked")
		if err := os.Mkdir(locked, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(locked, "f.txt"), "secret", 0o644)
		write(t, filepath.Join(root, "unreadable.txt"), "u", 0o200)
		write(t, filepath.Join(root, "readonly.txt"), "r", 0o444)
		if err := os.Mkdir(filepath.Join(root, "ro"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(root, "ro", "a.txt"), "keep", 0o644)
		if err := os.Mkdir(filepath.Join(root, "w"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../locked/f.txt", filepath.Join(root, "w", "peek")); err != nil {
			t.Fatal(err)
		}
		// Targets resolved while everything is readable.
		inLocked := mustResolve(t, f, "locked/f.txt")
		lockedDir := mustResolve(t, f, "locked")
		unreadable := mustResolve(t, f, "unreadable.txt")
		roFile := mustResolve(t, f, "ro/a.txt")
		roNew := mustResolve(t, f, "ro/new.txt")
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, "ro"), 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			os.Chmod(locked, 0o755)
			os.Chmod(filepath.Join(root, "ro"), 0o755)
		})

		denied := func(verb, path string) string { return `cannot ` + verb + ` "` + path + `": permission denied` }
		_, err := f.Resolve(ctx, "locked/f.txt", "")
		wantFsErr(t, err, fs.CodePermission, denied("resolve", inLocked.Path))
		_, err = f.Stat(ctx, inLocked)
		wantFsErr(t, err, fs.CodePermission, denied("stat", inLocked.Path))
		_, err = f.ListDir(ctx, lockedDir)
		wantFsErr(t, err, fs.CodePermission, denied("list", lockedDir.Path))
		_, err = f.ListDir(ctx, mustResolve(t, f, "w"))
		wantFsErr(t, err, fs.CodePermission, denied("list", root+"/w/peek")) // one child fails all
		_, err = f.ReadText(ctx, unreadable)
		wantFsErr(t, err, fs.CodePermission, denied("read", unreadable.Path))
		_, err = f.StreamText(ctx, unreadable)
		wantFsErr(t, err, fs.CodePermission, denied("read", unreadable.Path))
		_, err = f.EditText(ctx, unreadable, fs.EditRequest{Old: "u", New: "v"}, nil)
		wantFsErr(t, err, fs.CodePermission, denied("edit", unreadable.Path))
		_, err = f.WriteText(ctx, unreadable, "x", nil) // the pre-read of the old text is a read
		wantFsErr(t, err, fs.CodePermission, denied("read", unreadable.Path))
		_, err = f.WriteText(ctx, roNew, "x", nil)
		wantFsErr(t, err, fs.CodePermission, denied("write", roNew.Path))
		_, err = f.WriteText(ctx, roFile, "x", nil)
		wantFsErr(t, err, fs.CodePermission, denied("write", roFile.Path))
		_, err = f.EditText(ctx, roFile, fs.EditRequest{Old: "keep", New: "lost"}, nil)
		wantFsErr(t, err, fs.CodePermission, denied("edit", roFile.Path))
		if b, err := os.ReadFile(roFile.Key); err != nil || string(b) != "keep" {
			t.Errorf("read-only directory's file = %q, %v", b, err)
		}
		// A file this user may not open for writing is not replaced, although
		// its directory would allow the rename.
		readonly := mustResolve(t, f, "readonly.txt")
		_, err = f.WriteText(ctx, readonly, "x", nil)
		wantFsErr(t, err, fs.CodePermission, denied("write", readonly.Path))
		_, err = f.EditText(ctx, readonly, fs.EditRequest{Old: "r", New: "w"}, nil)
		wantFsErr(t, err, fs.CodePermission, denied("edit", readonly.Path))
		if b, err := os.ReadFile(readonly.Key); err != nil || string(b) != "r" {
			t.Errorf("read-only file = %q, %v", b, err)
		}
		// A directory this user may write but not read is refused before
		// anything is staged: the fsync after the rename would need to
		// open it.
		dropbox := filepath.Join(root, "dropbox")
		if err := os.Mkdir(dropbox, 0o700); err != nil {
			t.Fatal(err)
		}
		dropped := mustResolve(t, f, "dropbox/new.txt")
		if err := os.Chmod(dropbox, 0o300); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dropbox, 0o700) })
		_, err = f.WriteText(ctx, dropped, "x", nil)
		wantFsErr(t, err, fs.CodePermission, denied("write", dropped.Path))
		if err := os.Chmod(dropbox, 0o700); err != nil {
			t.Fatal(err)
		}
		if entries, err := os.ReadDir(dropbox); err != nil || len(entries) != 0 {
			t.Errorf("a refused write into a 0300 directory left %v, %v", entries, err)
		}
		// A target swapped for a link to a file this user may not write,
		// after it was resolved, is judged by the link itself: the check
		// never follows it out of the directory, and the rename would
		// replace the link.
		if accessNoFollow != 0 {
			other := filepath.Join(t.TempDir(), "other.txt")
			write(t, other, "theirs", 0o444)
			swapped := filepath.Join(root, "swapped.txt")
			write(t, swapped, "mine", 0o644)
			tg := mustResolve(t, f, swapped)
			if err := os.Remove(swapped); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, swapped); err != nil {
				t.Fatal(err)
			}
			if s, err := f.stage(ctx, "write", tg); err != nil {
				t.Errorf("staging beside a swapped link: %v", err)
			} else {
				s.discard()
			}
			if b, err := os.ReadFile(other); err != nil || string(b) != "theirs" {
				t.Errorf("the link's target = %q, %v", b, err)
			}
		}
		for _, dir := range []string{root, dropbox} {
			if left := leftovers(t, dir); len(left) != 0 {
				t.Errorf("staging left behind in %s: %v", dir, left)
			}
		}
		if n := f.locks.held(); n != 0 {
			t.Errorf("%d locks leaked", n)
		}
	})
}
