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
