package fslocal

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gordis-run/gordis/plugins/fs"
)

// TestSwapRace swaps the workspace's directory d with a symlink to the
// outside directory (renameat2 RENAME_EXCHANGE, so one of the two is always
// there) while writes, edits and reads go through d. Whatever the
// interleaving, nothing outside is created or changed: the names the
// provider resolved are walked again, relative to the root, by every
// operation.
func TestSwapRace(t *testing.T) {
	j := newJail(t)
	d, evil := filepath.Join(j.ws, "d"), filepath.Join(j.ws, "evil")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d, "secret.txt"), "eeee", 0o644)
	mustLink(t, j.out, evil)

	var stop atomic.Bool
	var swaps atomic.Int64
	swapper := make(chan struct{})
	go func() {
		defer close(swapper)
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, evil, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			swaps.Add(1)
		}
	}()
	rounds := 2000
	if testing.Short() {
		rounds = 100
	}
	var done, denied atomic.Int64
	var wg sync.WaitGroup
	ctx := context.Background()
	for w, verb := range []string{"write", "edit", "read", "list", "stat"} {
		wg.Go(func() {
			for i := range rounds {
				path := "d/secret.txt"
				switch verb {
				case "write":
					path = "d/new-" + strconv.Itoa(w) + "-" + strconv.Itoa(i) + ".txt"
				case "list":
					path = "d"
				}
				_, err := j.op(ctx, verb, path)
				if err == nil {
					done.Add(1)
				} else if fs.CodeOf(err) == fs.CodeSandboxDenied {
					denied.Add(1)
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	<-swapper
	t.Logf("%d swaps; %d operations done, %d refused", swaps.Load(), done.Load(), denied.Load())
	if done.Load() == 0 || denied.Load() == 0 {
		t.Errorf("the race did not happen: %d done, %d refused", done.Load(), denied.Load())
	}
	j.untouched(t)
}

// TestConfinedWithoutOpenat2 runs the boundary's tests, and the staging
// tests that go through the roots, on the os.Root fallback, the path kernels without openat2 take (and macOS and Windows
// take for stat and open).
func TestConfinedWithoutOpenat2(t *testing.T) {
	noOpenat2.Store(true)
	defer noOpenat2.Store(false)
	for name, test := range map[string]func(*testing.T){
		"Refusals": TestConfinedRefusals,
		"Allowed":  TestConfinedAllowed,
		"Dangling": TestConfinedDanglingAbsoluteLink,
		"SwapRace": TestSwapRace,
		"Kit":      TestConformanceConfined,
		"Sweeps":   TestSweepRootsStaysInside,
		"Racing":   TestSweepRacesWriters,
		"Xattrs":   TestReplaceKeepsXattrs,
		"SwapLink": TestReplaceSwappedForLinkInheritsNothing,
		"Walk":     TestWalkEntries,
		"WalkRace": TestWalkSwapRace,
	} {
		t.Run(name, test)
	}
}

// TestOpenRootSwapped opens a root while its directory is exchanged with
// another one, over and over: the handle that stat and open go through
// (the walker's) and the os.Root that the other operations go through
// must be one directory, whichever the opening met.
func TestOpenRootSwapped(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, other := filepath.Join(base, "ws"), filepath.Join(base, "other")
	for _, dir := range []string{ws, other} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	swapper := make(chan struct{})
	go func() {
		defer close(swapper)
		for !stop.Load() {
			unix.Renameat2(unix.AT_FDCWD, ws, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE)
		}
	}()
	defer func() { stop.Store(true); <-swapper }()
	opened := 0
	for range 2000 {
		r, err := openRoot(ws, false, true)
		if err != nil {
			continue // the swap met EvalSymlinks half-way
		}
		opened++
		fi, err := r.dir.Stat(".")
		var st unix.Stat_t
		if err == nil {
			err = unix.Fstat(r.walk.(*fdWalker).fd, &st)
		}
		r.close()
		if err != nil {
			t.Fatal(err)
		}
		if ino := fi.Sys().(*syscall.Stat_t).Ino; ino != st.Ino {
			t.Fatalf("the root's os.Root is inode %d, its walker's handle inode %d", ino, st.Ino)
		}
	}
	if opened == 0 {
		t.Fatal("no root opened during the swaps")
	}
}
