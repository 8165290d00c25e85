package fslocal

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

// TestWalkSwapRace walks the workspace and opens every file it meets,
// during the walk and after it, while its directory d is exchanged with a
// symlink to the outside directory (renameat2 RENAME_EXCHANGE): whatever
// the interleaving, no walk lists and no open reads anything outside. The
// outside file says "secret", d's says "eeee".
func TestWalkSwapRace(t *testing.T) {
	j, stopSwapping := swapping(t)
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	var walks, visits, opened, refused, escapes atomic.Int64
	read := func(e fs.WalkEntry) {
		rc, err := e.Open(context.Background())
		if err != nil {
			// A symlink or nothing where the file was; without openat2,
			// os.Root may also meet the link on the way and refuse it,
			// or fail to read a link that was swapped back (EINVAL).
			switch fs.CodeOf(err) {
			case fs.CodeNotRegularFile, fs.CodeNotFound, fs.CodeSandboxDenied, fs.CodeIO:
			default:
				t.Errorf("Open(%s): %v", e.Path(), err)
			}
			refused.Add(1)
			return
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		if err != nil {
			t.Errorf("read %s: %v", e.Path(), err)
		}
		opened.Add(1)
		if string(data) == "secret" {
			escapes.Add(1)
		}
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			ws := mustResolve(t, j.f, j.ws)
			for range rounds {
				var later []fs.WalkEntry
				err := j.f.Walk(context.Background(), ws, func(e fs.WalkEntry) error {
					visits.Add(1)
					if e.Type() == fs.TypeFile {
						read(e)
						later = append(later, e)
					}
					return nil
				})
				if err != nil {
					t.Errorf("walk: %v", err)
				}
				walks.Add(1)
				for _, e := range later {
					read(e)
				}
			}
		})
	}
	wg.Wait()
	swaps := stopSwapping()
	t.Logf("%d swaps; %d walks, %d visits, %d files read, %d opens refused, %d escapes",
		swaps, walks.Load(), visits.Load(), opened.Load(), refused.Load(), escapes.Load())
	if escapes.Load() != 0 {
		t.Errorf("%d opens read the outside file", escapes.Load())
	}
	if opened.Load() == 0 || refused.Load() == 0 {
		t.Errorf("the race did not happen: %d read, %d refused", opened.Load(), refused.Load())
	}
	j.untouched(t)
}

// TestWalkDescriptors checks the descriptors a walk holds: one per level
// of the current path plus the listings ahead (2 per GOMAXPROCS) at most,
// and none once it returned, however it ended.
func TestWalkDescriptors(t *testing.T) {
	_, root := fixture(t)
	manyFiles(t, root, 40, 5)
	deep := root
	for i := range 6 {
		deep = filepath.Join(deep, "n"+strconv.Itoa(i))
		if err := os.Mkdir(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		manyFiles(t, deep, 3, 2)
	}
	open := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(fds)
	}
	stop := errors.New("stop")
	for name, f := range map[string]*FS{"unconfined": NewUnconfined(root), "confined": confined(t, Config{Cwd: root})} {
		tg := mustResolve(t, f, root)
		for _, end := range []string{"done", "SkipAll", "error", "SkipDir", "cancel"} {
			t.Run(name+"/"+end, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				before, most, visits := open(), 0, 0
				err := f.Walk(ctx, tg, func(e fs.WalkEntry) error {
					visits++
					depth := strings.Count(e.Path(), "/") + 1
					if n := open() - before - depth; n > most {
						most = n
					}
					switch {
					case visits < 30:
					case end == "SkipAll":
						return fs.SkipAll
					case end == "error":
						return stop
					case end == "cancel":
						cancel()
					case end == "SkipDir" && e.Type() == fs.TypeDirectory:
						return fs.SkipDir
					}
					return nil
				})
				if (err != nil) != (end == "error" || end == "cancel") {
					t.Errorf("walk = %v", err)
				}
				if after := open(); after != before {
					t.Errorf("%d descriptors open before the walk, %d after", before, after)
				}
				if limit := 2*runtime.GOMAXPROCS(0) + 1; most > limit {
					t.Errorf("%d descriptors beyond the path's during the walk, want at most %d", most, limit)
				}
				t.Logf("%d visits, at most %d descriptors beyond the path's", visits, most)
			})
		}
	}
}
