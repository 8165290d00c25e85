package confine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
			"Stat":     func() error { _, err := r.Stat(name); return err },
			"Lstat":    func() error { _, err := r.Lstat(name); return err },
			"OpenFile": func() error { return opened(r.OpenFile(name, os.O_RDWR, 0)) },
			"OpenNoSymlinks": func() error {
				fd, err := r.OpenNoSymlinks(name, ReadFlags)
				if err == nil {
					syscall.Close(fd)
				}
				return err
			},
			"Mkdir":     func() error { return r.Mkdir(name+".d", 0o755) },
			"MkdirAll":  func() error { return r.MkdirAll(name+".d/e", 0o755) },
			"Chmod":     func() error { return r.Chmod(name, 0o777) },
			"Rename":    func() error { return r.Rename(name, "stolen") },
			"RemoveAll": func() error { return r.RemoveAll(name) },
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

// TestResolveSwapped resolves a name through the directory sw while sw is
// exchanged with a symlink to its sibling alt, inside the root: every
// resolution gives the key through one or the other, or ErrChanged when
// the swaps win every retry, never the errno of a lookup that met the
// other state (EINVAL from a readlink of the directory, ENOTDIR or ELOOP
// from an open of the link: issue 16, item 8).
func TestResolveSwapped(t *testing.T) {
	ws, _ := siblings(t, "ws", "unused")
	sw, alt := filepath.Join(ws, "sw"), filepath.Join(ws, "alt")
	for _, dir := range []string{sw, alt} {
		if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("alt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stop := confinetest.Swap(t, sw, filepath.Join(ws, "link"))
	keys := map[string]int{}
	changed := 0
	for range 5000 {
		key, err := r.Resolve(context.Background(), "sw/d/f")
		switch {
		case errors.Is(err, ErrChanged):
			changed++
		case err != nil:
			stop()
			t.Fatalf("Resolve: %v", err)
		default:
			keys[key]++
		}
	}
	t.Logf("%d swaps; keys %v, %d changed", stop(), keys, changed)
	for key := range keys {
		if key != filepath.Join(sw, "d/f") && key != filepath.Join(alt, "d/f") {
			t.Errorf("key %s", key)
		}
	}
}

// MkdirAllAt makes what is missing, shows check every directory it goes
// through, and never goes through a symlink.
func TestMkdirAllAt(t *testing.T) {
	ws, out := siblings(t, "ws", "out")
	if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	top, err := os.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer top.Close()
	var seen []string
	check := func(f *os.File) error {
		fi, err := f.Stat()
		if err == nil {
			seen = append(seen, fi.Name())
		}
		return err
	}
	dir, err := MkdirAllAt(top, "a/b", check)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := dir.Stat()
	dir.Close()
	if want, _ := os.Stat(filepath.Join(ws, "a/b")); err != nil || !os.SameFile(fi, want) {
		t.Errorf("MkdirAllAt(a/b) opened %v, %v; want %s", fi, err, filepath.Join(ws, "a/b"))
	}
	if got := strings.Join(seen, ","); got != "ws,a,b" {
		t.Errorf("check saw %s, want ws,a,b", got)
	}
	refuse := errors.New("refused")
	if _, err := MkdirAllAt(top, "a/c", func(f *os.File) error {
		if fi, _ := f.Stat(); fi.Name() == "a" {
			return refuse
		}
		return nil
	}); err != refuse {
		t.Errorf("a refusal by check = %v, want it returned", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "a/c")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a/c was made past a refusal: %v", err)
	}
	if _, err := MkdirAllAt(top, "link/x", check); !errors.Is(err, ErrChanged) {
		t.Errorf("MkdirAllAt through a symlink = %v, want ErrChanged", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("the symlink was followed: out holds %v", ents)
	}
}
