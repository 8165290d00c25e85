package fslocal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// TestWalkLargeDirectory walks a directory of more than two windows of
// entries, created out of order, with a subdirectory in the second window
// and a staging directory: every entry comes once, in byte order, the
// subdirectory's entries right after it, the staging directory never, and
// the external sort leaves no temporary file behind. The entries are hard
// links to one file, which are quicker to make than files; one provider
// is enough, since both walk with the same code.
func TestWalkLargeDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("TMP", tmp) // Windows
	spilled := func() []string {
		left, _ := filepath.Glob(filepath.Join(tmp, "gordis-sort-*"))
		return left
	}
	_, root := fixture(t)
	f := confined(t, Config{Cwd: root})
	n := 2*maxHeld + 3
	big := filepath.Join(root, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	sub := fmt.Sprintf("f%06d.d", maxHeld+7)
	for _, dir := range []string{sub, stagingPrefix + "0123456789abcdef"} {
		if err := os.Mkdir(filepath.Join(big, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(big, sub, "inner.txt"), "x", 0o644)
	var want []string
	for i := range n {
		name := fmt.Sprintf("f%06d", (i*7919)%n)
		if err := os.Link(filepath.Join(big, sub, "inner.txt"), filepath.Join(big, name)); err != nil {
			t.Fatal(err)
		}
		want = append(want, "big/"+name)
	}
	want = append(want, "big/"+sub, "big/"+sub+"/inner.txt")
	slices.Sort(want)
	want = append([]string{"", "big"}, want...)

	start := time.Now()
	var got []string
	err := f.Walk(context.Background(), mustResolve(t, f, root), func(e fs.WalkEntry) error {
		got = append(got, e.Path())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("walk visited %d entries, want %d in order; first difference at %s", len(got), len(want), firstDifference(got, want))
	}
	t.Logf("walked %d entries in %v", len(got), time.Since(start))
	if left := spilled(); len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}

func firstDifference(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%d: %q, want %q", i, a[i], b[i])
		}
	}
	return fmt.Sprint(min(len(a), len(b)))
}
