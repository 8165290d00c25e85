package fslocal

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gordis-run/gordis/plugins/fs"
)

// TestWalkSwapRace walks the workspace and opens every file it meets,
// during the walk and after it, while its directory d is exchanged with a
// symlink to the outside directory (renameat2 RENAME_EXCHANGE): whatever
// the interleaving, no walk lists and no open reads anything outside. The
// outside file says "secret", d's says "eeee".
func TestWalkSwapRace(t *testing.T) {
	j := newJail(t)
	d, evil := filepath.Join(j.ws, "d"), filepath.Join(j.ws, "evil")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d, "secret.txt"), "eeee", 0o644)
	mustLink(t, j.out, evil)

	var stop atomic.Bool
	var swaps atomic.Int64
	swapper := make(chan struct{})
	go func() {
		defer close(swapper)
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, evil, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			swaps.Add(1)
		}
	}()
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
	stop.Store(true)
	<-swapper
	t.Logf("%d swaps; %d walks, %d visits, %d files read, %d opens refused, %d escapes",
		swaps.Load(), walks.Load(), visits.Load(), opened.Load(), refused.Load(), escapes.Load())
	if escapes.Load() != 0 {
		t.Errorf("%d opens read the outside file", escapes.Load())
	}
	if opened.Load() == 0 || refused.Load() == 0 {
		t.Errorf("the race did not happen: %d read, %d refused", opened.Load(), refused.Load())
	}
	j.untouched(t)
}
