package confine

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenRootSwapped opens a root while its directory is exchanged with
// another one, over and over: the handle that stat and open go through
// (the resolver's) and the os.Root that the other operations go through
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
		r, err := OpenRoot(ws)
		if err != nil {
			continue // the swap met EvalSymlinks half-way
		}
		opened++
		fi, err := r.dir.Stat(".")
		var st unix.Stat_t
		if err == nil {
			err = unix.Fstat(r.res.(*fdResolver).fd, &st)
		}
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ino := fi.Sys().(*syscall.Stat_t).Ino; ino != st.Ino {
			t.Fatalf("the root's os.Root is inode %d, its resolver's handle inode %d", ino, st.Ino)
		}
	}
	if opened == 0 {
		t.Fatal("no root opened during the swaps")
	}
}
