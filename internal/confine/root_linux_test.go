package confine

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gordis-run/gordis/internal/confine/confinetest"
)

// TestOpenRootSwapped opens a root while its directory is exchanged with
// another one, over and over: the handle that stat and open go through
// (the resolver's) and the os.Root that the other operations go through
// must be one directory, whichever the opening met.
func TestOpenRootSwapped(t *testing.T) {
	ws, other := siblings(t, "ws", "other")
	defer confinetest.Swap(t, ws, other)()
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

// Every method of a Root refuses a name that leaves it, by ".." or by a
// link, and leaves the outside as it was.
func TestRootMethodsRefuseEscapes(t *testing.T) {
	ws, out := siblings(t, "ws", "out")
	secret := filepath.Join(out, "secret.txt")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	opened := func(f *os.File, err error) error {
		if err == nil {
			f.Close()
		}
		return err
	}
	for _, name := range []string{"../out/secret.txt", "link/secret.txt"} {
		for op, call := range map[string]func() error{
			"Stat":           func() error { _, err := r.Stat(name); return err },
			"Lstat":          func() error { _, err := r.Lstat(name); return err },
			"OpenFile":       func() error { return opened(r.OpenFile(name, os.O_RDWR, 0)) },
			"OpenNoSymlinks": func() error { return opened(r.OpenNoSymlinks(name, ReadFlags)) },
			"Mkdir":          func() error { return r.Mkdir(name+".d", 0o755) },
			"MkdirAll":       func() error { return r.MkdirAll(name+".d/e", 0o755) },
			"Chmod":          func() error { return r.Chmod(name, 0o777) },
			"Rename":         func() error { return r.Rename(name, "stolen") },
			"RemoveAll":      func() error { return r.RemoveAll(name) },
		} {
			err := call()
			// OpenNoSymlinks meets the link itself first: ELOOP, not an escape.
			if !r.IsEscape(err) && !(op == "OpenNoSymlinks" && errors.Is(err, syscall.ELOOP)) {
				t.Errorf("%s(%q) = %v, want an escape", op, name, err)
			}
		}
	}
	fi, err := os.Stat(secret)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the outside changed: %v, %v", fi, err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Fatalf("the outside holds %d entries, want 1", len(ents))
	}
}

// The same, on the os.Root path that kernels without openat2 take.
func TestRootMethodsRefuseEscapesWithoutOpenat2(t *testing.T) {
	SetOpenat2(false)
	defer SetOpenat2(true)
	TestRootMethodsRefuseEscapes(t)
}
