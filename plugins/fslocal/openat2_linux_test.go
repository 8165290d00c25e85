package fslocal

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gordis-run/gordis/internal/confine"
)

// BenchmarkConfinedOpen compares the ways to stat and open a file 3 levels
// below a directory handle without leaving it: os.Root (a resolution in
// user space, one openat per component), openat2 with RESOLVE_BENEATH (one
// system call, the kernel refuses escapes), and, as the floor, plain stat
// and open by absolute name (no confinement).
func BenchmarkConfinedOpen(b *testing.B) {
	dir, rel := deepFile(b)
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	dirfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(dirfd)
	abs := filepath.Join(dir, rel)

	b.Run("os.Root", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := root.Stat(rel); err != nil {
				b.Fatal(err)
			}
			f, err := root.OpenFile(rel, confine.ReadFlags, 0)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("openat2", func(b *testing.B) {
		how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
		b.ReportAllocs()
		var st unix.Stat_t
		for b.Loop() {
			// A stat needs a descriptor: openat2 has no stat twin.
			fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: how.Resolve})
			if err != nil {
				b.Fatal(err)
			}
			if err := unix.Fstat(fd, &st); err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
			fd, err = unix.Openat2(dirfd, rel, &how)
			if err != nil {
				b.Fatal(err)
			}
			os.NewFile(uintptr(fd), abs).Close()
		}
	})
	b.Run("unconfined", func(b *testing.B) {
		b.ReportAllocs()
		var st syscall.Stat_t
		for b.Loop() {
			if err := syscall.Stat(abs, &st); err != nil {
				b.Fatal(err)
			}
			f, err := os.OpenFile(abs, confine.ReadFlags, 0)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
}
