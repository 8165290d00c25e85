//go:build linux || darwin

package confine

import (
	"os"
	"syscall"
	"time"
)

// Stat is the platform's stat: everything the provider reads of a file in
// one system call.
type Stat = syscall.Stat_t

// statPath and lstatPath retry EINTR, as package os does.
func statPath(path string, st *Stat) error {
	for {
		err := syscall.Stat(path, st)
		if err != syscall.EINTR {
			return WrapErrno("stat", path, err)
		}
	}
}

func lstatPath(path string, st *Stat) error {
	for {
		err := syscall.Lstat(path, st)
		if err != syscall.EINTR {
			return WrapErrno("lstat", path, err)
		}
	}
}

// Fstat stats the open file into st.
func Fstat(file *os.File, st *Stat) error {
	raw, err := file.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		for {
			if serr = syscall.Fstat(int(fd), st); serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return WrapErrno("fstat", file.Name(), serr)
}

// WrapErrno is err, a system call's, as an *os.PathError; nil stays nil.
func WrapErrno(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// fillStat copies the stat behind fi, as package os made it.
func fillStat(fi os.FileInfo, st *Stat) { *st = *fi.Sys().(*syscall.Stat_t) }

// ModTime is the modification time st reports, from its seconds and
// nanoseconds: a count of nanoseconds since 1970 overflows after 2262, and
// a file touched to 2300 would sort as the oldest.
func ModTime(st *Stat) time.Time {
	ts := mtimespec(st)
	return time.Unix(ts.Unix())
}

// IsRegular, IsDir and IsSymlink report the type of file st describes.
func IsRegular(st *Stat) bool { return st.Mode&syscall.S_IFMT == syscall.S_IFREG }

func IsDir(st *Stat) bool { return st.Mode&syscall.S_IFMT == syscall.S_IFDIR }

func IsSymlink(st *Stat) bool { return st.Mode&syscall.S_IFMT == syscall.S_IFLNK }

// Perm is the permission bits of st.
func Perm(st *Stat) uint32 { return uint32(st.Mode) & 0o777 }
