package confine

import (
	"os"
	"path/filepath"
	"testing"
)

// A name that os.Root refuses for leaving it is told apart from other
// failures, so the operations that go through os.Root report it as an
// escape.
func TestRootEscapeIsRecognised(t *testing.T) {
	dir := t.TempDir()
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.Symlink("..", filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	// "up" and "up/" are the last component: MkdirAll reports their
	// escape wrapped twice.
	for _, name := range []string{"../x", "up/x", "up", "up/"} {
		if err := r.MkdirAll(name, 0o777); !r.IsEscape(err) {
			t.Errorf("MkdirAll(%q) = %v, want an escape", name, err)
		}
	}
	if _, err := r.dir.Stat("missing"); r.IsEscape(err) {
		t.Errorf("a missing name is taken for an escape: %v", err)
	}
}

// siblings makes two directories side by side in a fresh temporary
// directory and returns their real paths.
func siblings(t *testing.T, a, b string) (string, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b = filepath.Join(base, a), filepath.Join(base, b)
	for _, dir := range []string{a, b} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}
