package confinetest

import (
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// Swap exchanges the entries at the absolute paths a and b, a directory and
// a symlink say, with renameat2(RENAME_EXCHANGE) in a loop, so that one of
// the two is always at each name, until stop, which returns how many swaps
// it made. A failing exchange ends the loop and fails tb (reported when
// stop is called, since tb.Fatal is not for other goroutines).
func Swap(tb testing.TB, a, b string) (stop func() int64) {
	var (
		done  atomic.Bool
		swaps atomic.Int64
	)
	ended := make(chan error, 1)
	go func() {
		for !done.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				ended <- err
				return
			}
			swaps.Add(1)
		}
		ended <- nil
	}()
	return func() int64 {
		done.Store(true)
		if err := <-ended; err != nil {
			tb.Errorf("renameat2(%s, %s, RENAME_EXCHANGE): %v", a, b, err)
		}
		return swaps.Load()
	}
}
