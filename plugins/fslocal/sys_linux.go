package fslocal

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing [off, off+n) to disk now
// (sync_file_range with SYNC_FILE_RANGE_WRITE), so that disk writes overlap
// the rest of the copy and the final fsync waits for less: on this
// project's test disk a 64 MiB write plus fsync went from about 60 to 35 ms.
// It is only a hint; durability still comes from the fsync, which also
// reports any error.
func startWriteback(file *os.File, off, n int64) {
	raw, err := file.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}

// holdReplaced keeps the file at name (the one a rename is about to
// replace) referenced, by an O_PATH descriptor that needs no permission and
// has no open side effects, and returns its release. Releasing it on
// another goroutine makes that the last reference, so freeing the old
// file's page cache and blocks (3.7 ms of the rename for 10 MiB on this
// project's disk) leaves the caller's path.
func holdReplaced(r *root, name string) (release func()) {
	old, err := r.open(name, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return func() {}
	}
	return func() { go old.Close() }
}
