package confine

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux the hot calls, stat and open, resolve their name in one
// openat2(RESOLVE_BENEATH) instead of os.Root's resolution, one openat per
// component: the kernel refuses any step out of the directory (EXDEV),
// through a symlink, "..", or a directory swapped for a symlink. It took
// about a quarter of os.Root's time for a stat and an open 3 levels deep,
// with 4 allocations instead of 18, and about as long as an unconfined stat
// and open (BenchmarkConfinedOpen, medians of 6 runs on a busy machine).
// Where openat2 is missing (ENOSYS: Linux before 5.6, or a filter that
// hides it) os.Root does the work.

// beneath is how names are resolved: never above the directory, and never
// through /proc's magic links.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

func (r *Root) statBeneath(name string, st *Stat) error {
	fd, err := r.openat2(name, unix.O_PATH|unix.O_CLOEXEC, 0, beneath)
	if err == errNoOpenat2 {
		return r.statRoot(name, st)
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = Retry(func() (int, error) { return 0, syscall.Fstat(fd, st) })
	return WrapErrno("fstat", name, err)
}

func (r *Root) openBeneath(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := r.openat2(name, flag|unix.O_CLOEXEC, perm, beneath)
	if err == errNoOpenat2 {
		return r.dir.OpenFile(name, flag, perm)
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.Key(name)), nil
}

// errNoOpenat2 says the kernel has no usable openat2; noOpenat2 remembers
// it, so the fallback costs no failing system call after the first.
var (
	errNoOpenat2 = &os.SyscallError{Syscall: "openat2", Err: unix.ENOSYS}
	noOpenat2    atomic.Bool
)

// SetOpenat2 turns the use of openat2 on or off, as a kernel without it
// would: tests run the os.Root fallback with it.
func SetOpenat2(on bool) { noOpenat2.Store(!on) }

// openat2 opens name beneath the root with the resolve flags given (beneath
// at least).
func (r *Root) openat2(name string, flag int, perm os.FileMode, resolve uint64) (int, error) {
	if noOpenat2.Load() {
		return -1, errNoOpenat2
	}
	how := unix.OpenHow{Flags: uint64(flag), Mode: uint64(syscallMode(perm)), Resolve: resolve}
	w := r.res.(*fdResolver) // a confined root's
	dir, ok := w.acquire()
	if !ok {
		return -1, &os.PathError{Op: "openat2", Path: name, Err: os.ErrClosed}
	}
	defer w.release()
	for tries := 1; ; tries++ {
		fd, err := unix.Openat2(dir, name, &how)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR:
			continue
		case unix.EAGAIN: // a rename raced a ".." of the lookup
			if tries < maxRaces {
				continue
			}
			return -1, errNoOpenat2 // os.Root, for this call only
		case unix.ENOSYS:
			noOpenat2.Store(true)
			return -1, errNoOpenat2
		case unix.EXDEV:
			return -1, &os.PathError{Op: "openat2", Path: name, Err: ErrEscape}
		}
		return -1, &os.PathError{Op: "openat2", Path: name, Err: err}
	}
}

// syscallMode is the permission and special bits of perm, as open(2) takes
// them.
func syscallMode(perm os.FileMode) uint32 {
	mode := uint32(perm.Perm())
	if perm&os.ModeSetuid != 0 {
		mode |= unix.S_ISUID
	}
	if perm&os.ModeSetgid != 0 {
		mode |= unix.S_ISGID
	}
	if perm&os.ModeSticky != 0 {
		mode |= unix.S_ISVTX
	}
	return mode
}

// LstatAt stats the entry name of the directory open as dirfd, without
// following it: one fstatat relative to the directory's handle, which no
// name without a separator can leave.
func LstatAt(dirfd int, name string, st *Stat) error {
	_, err := Retry(func() (int, error) {
		return 0, unix.Fstatat(dirfd, name, (*unix.Stat_t)(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW)
	})
	return WrapErrno("lstat", name, err)
}

// Package syscall has no fstatat on Linux; x/sys's Stat_t is the same kernel
// struct as syscall's, which these fail to compile unless the sizes match.
var (
	_ [unsafe.Sizeof(unix.Stat_t{}) - unsafe.Sizeof(syscall.Stat_t{})]byte
	_ [unsafe.Sizeof(syscall.Stat_t{}) - unsafe.Sizeof(unix.Stat_t{})]byte
)

// OpenNoSymlinks opens name with flag without following any symlink: one
// openat2 beneath the root's handle, refusing symlinks at every step;
// without openat2, its directory through os.Root and the file relative to
// that (O_NOFOLLOW). It returns the descriptor, which the caller closes: a
// reader of many small files (a search) then pays for no *os.File (an
// fcntl, and an epoll registration that a regular file refuses).
func (r *Root) OpenNoSymlinks(name string, flag int) (int, error) {
	flag |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := r.openat2(name, flag, 0, beneath|unix.RESOLVE_NO_SYMLINKS)
	if err == errNoOpenat2 {
		fd, err = r.openInDir(name, flag)
	}
	return fd, err
}

// OpenNoSymlinks opens the absolute name with flag, a final symlink
// refused (O_NOFOLLOW), and returns the descriptor: a Host has nothing to
// keep out.
func (h *Host) OpenNoSymlinks(name string, flag int) (int, error) {
	fd, err := Retry(func() (int, error) { return unix.Open(name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0) })
	if err != nil {
		return -1, WrapErrno("open", name, err)
	}
	return fd, nil
}

// openInDir opens name relative to its directory, which os.Root opens.
func (r *Root) openInDir(name string, flag int) (int, error) {
	dir, err := r.OpenFile(filepath.Dir(name), DirFlags, 0)
	if err != nil {
		return -1, err
	}
	defer dir.Close()
	base := filepath.Base(name)
	fd, err := Retry(func() (int, error) { return unix.Openat(int(dir.Fd()), base, flag, 0) })
	return fd, WrapErrno("openat", name, err)
}
