package fslocal

import (
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fs/fstest"
)

func TestConformance(t *testing.T) {
	newFS := func(t *testing.T, root string) fs.FileSystem { return NewUnconfined(root) }
	fstest.TestFileSystem(t, newFS)
	fstest.TestWalk(t, newFS)
}

// TestConformanceConfined runs the kit against the provider confined to
// the fixture's directory: everything the kit does stays inside it.
func TestConformanceConfined(t *testing.T) {
	newFS := func(t *testing.T, root string) fs.FileSystem { return confined(t, Config{Cwd: root}) }
	fstest.TestFileSystem(t, newFS)
	fstest.TestConfinement(t, newFS)
	fstest.TestWalk(t, newFS)
}

// confined opens a confined provider for the test and closes it after.
func confined(t testing.TB, cfg Config) *FS {
	t.Helper()
	f, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return f
}
