package toolfs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// listingCounter is the local provider, counting its ListNames calls.
type listingCounter struct {
	*fslocal.FS
	listings atomic.Int32
}

func (c *listingCounter) ListNames(ctx context.Context, t fs.Target, fn func(string, fs.Type) error) (fs.Version, error) {
	c.listings.Add(1)
	return c.FS.ListNames(ctx, t, fn)
}

// TestListKeepsLargeListings: the pages of a directory of 5,000 entries
// that last changed an hour ago list it once; a change lists it again and
// shows; a directory that changed just now is listed on every page, since
// a change in the same tick of its clock would not show in its version.
func TestListKeepsLargeListings(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(big, "f0000.txt")
	if err := os.WriteFile(first, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 5000; i++ {
		if err := os.Link(first, filepath.Join(big, fmt.Sprintf("f%04d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	settle := func() {
		hourAgo := time.Now().Add(-time.Hour)
		if err := os.Chtimes(big, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
	root := runtimetest.New(t)
	local := &listingCounter{FS: fslocal.NewUnconfined(dir)}
	if err := fs.Service.Provide(root, local); err != nil {
		t.Fatal(err)
	}
	runtimetest.Plug(t, root, registry.Plugin, nil)
	runtimetest.Plug(t, root, toolfs.Plugin, nil)
	tools, _ := registry.Tools.Lookup(root)
	s := newSession(dir)
	page := func(offset int) string {
		t.Helper()
		r := tools.Execute(context.Background(), &registry.Call{ID: "l", Tool: "list", Session: s,
			Args: []byte(fmt.Sprintf(`{"path": "big", "offset": %d}`, offset))})
		if r.IsError {
			t.Fatal(r.Text)
		}
		return r.Text
	}
	footer := func(text string) string { return text[strings.LastIndex(text, "(Showing"):] }
	for _, step := range []struct {
		name     string
		change   func()
		offset   int
		listings int32
		footer   string
	}{
		{"first page", settle, 1, 1, "(Showing entries 1-200 of 5000: 0 directories, 5000 files. Use offset=201 to continue.)\n</content>"},
		{"next page, kept", nil, 201, 1, "(Showing entries 201-400 of 5000: 0 directories, 5000 files. Use offset=401 to continue.)\n</content>"},
		{"a file added", func() { os.WriteFile(filepath.Join(big, "new.txt"), nil, 0o644) }, 401, 2, "(Showing entries 401-600 of 5001: 0 directories, 5001 files. Use offset=601 to continue.)\n</content>"},
		{"changed just now, not kept", nil, 601, 3, "(Showing entries 601-800 of 5001: 0 directories, 5001 files. Use offset=801 to continue.)\n</content>"},
		{"settled again", settle, 801, 4, "(Showing entries 801-1000 of 5001: 0 directories, 5001 files. Use offset=1001 to continue.)\n</content>"},
		{"kept again", nil, 1001, 4, "(Showing entries 1001-1200 of 5001: 0 directories, 5001 files. Use offset=1201 to continue.)\n</content>"},
	} {
		if step.change != nil {
			step.change()
		}
		if got := footer(page(step.offset)); got != step.footer {
			t.Errorf("%s: footer %q, want %q", step.name, got, step.footer)
		}
		if got := local.listings.Load(); got != step.listings {
			t.Errorf("%s: %d listings so far, want %d", step.name, got, step.listings)
		}
	}
}
