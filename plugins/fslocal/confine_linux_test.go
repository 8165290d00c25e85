package fslocal

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/internal/confine/confinetest"
	"github.com/gordis-run/gordis/plugins/fs"
)

// swapping starts exchanging the workspace's directory d (holding
// secret.txt, "eeee") with a symlink to the outside directory (renameat2
// RENAME_EXCHANGE, so one of the two is always there) until stop, which
// returns how many swaps it made.
func swapping(t *testing.T) (j *jail, stop func() int64) {
	j = newJail(t)
	d, evil := filepath.Join(j.ws, "d"), filepath.Join(j.ws, "evil")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d, "secret.txt"), "eeee", 0o644)
	mustLink(t, j.out, evil)
	return j, confinetest.Swap(t, d, evil)
}

// TestSwapRace swaps the workspace's directory d with a symlink to the
// outside directory (renameat2 RENAME_EXCHANGE, so one of the two is always
// there) while writes, edits and reads go through d. Whatever the
// interleaving, nothing outside is created or changed: the names the
// provider resolved are resolved again, relative to the root, by every
// operation.
func TestSwapRace(t *testing.T) {
	j, stopSwapping := swapping(t)
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
	t.Logf("%d swaps; %d operations done, %d refused", stopSwapping(), done.Load(), denied.Load())
	if done.Load() == 0 || denied.Load() == 0 {
		t.Errorf("the race did not happen: %d done, %d refused", done.Load(), denied.Load())
	}
	j.untouched(t)
}

// TestConfinedWithoutOpenat2 runs the boundary's tests, and the staging
// tests that go through the roots, on the os.Root fallback, the path kernels without openat2 take (and macOS and Windows
// take for stat and open).
func TestConfinedWithoutOpenat2(t *testing.T) {
	confine.SetOpenat2(false)
	defer confine.SetOpenat2(true)
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
