//go:build linux || darwin

package confine

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A modification time past 2262 (where nanoseconds since 1970 overflow an
// int64) is reported as it is, so that a search sorting by it puts the
// file last, not first.
func TestModTimeAfter2262(t *testing.T) {
	dir := t.TempDir()
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	name := filepath.Join(dir, "future")
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []time.Time{
		time.Date(2300, 1, 1, 0, 0, 0, 7, time.UTC),
		time.Date(1901, 12, 14, 0, 0, 0, 0, time.UTC),
	} {
		// os.Chtimes goes through nanoseconds too.
		ts := unix.Timespec{Sec: want.Unix(), Nsec: int64(want.Nanosecond())}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, name, []unix.Timespec{ts, ts}, 0); err != nil {
			t.Fatal(err)
		}
		st, err := r.Lstat("future")
		if err != nil {
			t.Fatal(err)
		}
		if got := ModTime(&st); !got.Equal(want) {
			t.Errorf("ModTime = %v, want %v", got, want)
		}
	}
}
