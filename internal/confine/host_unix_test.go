//go:build unix

package confine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// What a Root refuses for leading out of it, a Host follows: the same
// names, through the same links, resolve to the file outside.
func TestRootRefusesWhatHostFollows(t *testing.T) {
	ws, out := siblings(t, "ws", "out")
	secret := filepath.Join(out, "secret.txt")
	if err := os.WriteFile(secret, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"abs": out, "rel": "../out"} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := NewHost(string(filepath.Separator))
	ctx := context.Background()
	for _, name := range []string{"abs/secret.txt", "rel/secret.txt", "../out/secret.txt"} {
		if key, err := r.Resolve(ctx, name); !r.IsEscape(err) {
			t.Errorf("Root.Resolve(%q) = %q, %v; want an escape", name, key, err)
		}
		if _, err := r.Stat(name); !r.IsEscape(err) {
			t.Errorf("Root.Stat(%q) = %v; want an escape", name, err)
		}
		abs := ws + string(filepath.Separator) + name
		if key, err := h.Resolve(ctx, abs); key != secret || err != nil {
			t.Errorf("Host.Resolve(%q) = %q, %v; want %q", abs, key, err, secret)
		}
		if st, err := h.Stat(abs); err != nil || !IsRegular(&st) {
			t.Errorf("Host.Stat(%q) = %v, want the regular file", abs, err)
		}
	}
	// ".." stops at the Host's top, as in the kernel.
	up := "/../.." + filepath.ToSlash(secret)
	if key, err := h.Resolve(ctx, up); key != secret || err != nil {
		t.Errorf("Host.Resolve(%q) = %q, %v; want %q", up, key, err, secret)
	}
}
