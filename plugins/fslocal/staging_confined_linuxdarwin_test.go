//go:build linux || darwin

package fslocal

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
	"golang.org/x/sys/unix"
)

// SweepRoots sweeps the top of the workspace and of each read-write root,
// through their handles: not a read-only root, not a subdirectory (its
// first write sweeps it), and never through a staging-shaped symlink or a
// directory swapped for a link out of the workspace.
func TestSweepRootsStaysInside(t *testing.T) {
	j := newJail(t)
	ctx := context.Background()
	sub := filepath.Join(j.ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	wsDead := leftover(t, j.ws, "0000000000000001", "dead")
	subDead := leftover(t, sub, "0000000000000002", "dead")
	spareDead := leftover(t, j.spare, "0000000000000003", "dead")
	docsDead := leftover(t, j.docs, "0000000000000004", "dead")
	outDead := leftover(t, j.out, "0000000000000005", "dead")
	link := filepath.Join(j.ws, stagingPrefix+"0000000000000006")
	mustLink(t, outDead, link)

	if err := j.f.SweepRoots(ctx); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		wsDead: false, spareDead: false,
		subDead: true, docsDead: true, outDead: true, filepath.Join(outDead, stagedFile): true, link: true,
	} {
		if got := exists(t, path); got != want {
			t.Errorf("%s exists = %v after SweepRoots, want %v", path, got, want)
		}
	}

	// The first write into sub sweeps it.
	tg := mustResolve(t, j.f, "sub/a.txt")
	if _, err := j.f.WriteText(ctx, tg, "a", nil); err != nil {
		t.Fatal(err)
	}
	if exists(t, subDead) {
		t.Errorf("the first write into %s did not sweep it", sub)
	}

	// sub swapped for a link to the outside after it was resolved: the
	// write is refused, and nothing outside is swept or written.
	tg = mustResolve(t, j.f, "sub/b.txt")
	if err := os.Rename(sub, filepath.Join(j.ws, "moved")); err != nil {
		t.Fatal(err)
	}
	mustLink(t, j.out, sub)
	_, err := j.f.WriteText(ctx, tg, "b", nil)
	wantFsErr(t, err, fs.CodeSandboxDenied, `cannot write "`+tg.Path+`": outside the workspace "`+j.ws+`"`)
	// Staging itself (whose sweep would follow the link if it went by
	// the key's name) refuses too.
	if s, err := j.f.stage(ctx, "write", tg); err == nil {
		s.discard()
		t.Error("staging through a link out of the workspace succeeded")
	} else {
		wantFsErr(t, err, fs.CodeSandboxDenied, `cannot write "`+tg.Path+`": outside the workspace "`+j.ws+`"`)
	}
	if !exists(t, filepath.Join(outDead, stagedFile)) || exists(t, filepath.Join(j.out, "b.txt")) {
		t.Errorf("a refused write reached the outside")
	}
}

// The plugin sweeps its workspace when it starts, and a sweep that fails
// (here on a staging-shaped directory whose "data" is a directory) is
// logged as a warning, and the plugin starts.
func TestPluginSweepsAtStart(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logs := runtimetest.NewLogs()
	start := func() {
		t.Helper()
		root := runtimetest.New(t, runtime.WithLogger(slog.New(logs)))
		runtimetest.Plug(t, root, Plugin, Config{Cwd: ws})
		if _, ok := fs.Service.Lookup(root); !ok {
			t.Fatal("the plugin did not start")
		}
	}
	dead := leftover(t, ws, "0000000000000001", "dead")
	start()
	if exists(t, dead) {
		t.Errorf("the plugin's start left %s", dead)
	}
	if recs := logs.Records(); len(recs) != 0 {
		t.Errorf("a clean start logged %+v", recs)
	}

	odd := leftover(t, ws, "0000000000000002", "")
	if err := os.Mkdir(filepath.Join(odd, stagedFile), 0o700); err != nil {
		t.Fatal(err)
	}
	start()
	recs := logs.Records()
	if len(recs) != 1 || recs[0].Level != slog.LevelWarn ||
		recs[0].Message != "the start sweep of staging directories failed" ||
		!strings.Contains(recs[0].Attrs["error"], odd) {
		t.Errorf("logged %+v, want one warning naming %s", recs, odd)
	}
}

// A target swapped for a symlink after it was staged is replaced as the
// link (the rename replaces the name), and the new file takes nothing from
// the file the link names: neither its attributes nor, for root, its owner.
func TestReplaceSwappedForLinkInheritsNothing(t *testing.T) {
	j := newJail(t)
	ctx := context.Background()
	other := filepath.Join(j.ws, "other.txt")
	write(t, other, "other", 0o644)
	if err := unix.Setxattr(other, "user.gordis.note", []byte("other's"), 0); err != nil {
		t.Skipf("%s takes no user xattrs: %v", j.ws, err)
	}
	asRoot := os.Geteuid() == 0
	if asRoot {
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(j.ws, "a.txt")
	tg := mustResolve(t, j.f, target)
	s, err := j.f.stage(ctx, "write", tg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.discard()
	if err := s.write(ctx, false, "new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	mustLink(t, "other.txt", target)
	if err := s.commit(ctx, tg, 0o644); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(target, &st); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new" || st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.Fatalf("%s = %q, mode %o; want the new regular file", target, got, st.Mode)
	}
	buf := make([]byte, 16)
	if n, err := unix.Getxattr(target, "user.gordis.note", buf); err == nil {
		t.Errorf("the new file took user.gordis.note = %q from the link's target", buf[:n])
	}
	if asRoot && st.Uid == 65534 {
		t.Errorf("the new file took the owner of the link's target")
	}
	if got, _ := os.ReadFile(other); string(got) != "other" {
		t.Errorf("the link's target = %q, want it untouched", got)
	}
}
