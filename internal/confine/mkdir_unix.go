//go:build unix

package confine

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// MkdirAllAt opens for reading the directory rel (clean, relative, "."
// for top itself) below the open directory top, making its missing
// components (mode 0777 less the umask), one component at a time, each
// relative to the handle of the one before, never through a symlink. rel
// is meant to be a real name, one that resolution found free of symlinks:
// a symlink or a file on its way now is a directory replaced since, looked
// at again up to maxRaces times, then ErrChanged. check sees every
// directory of the walk, top and the one returned included, as a handle,
// before the walk goes on from it: the caller judges the very directories
// the walk goes through (by fstat), not names that may have changed since.
// Its error ends the walk. The caller closes the file returned.
func MkdirAllAt(top *os.File, rel string, check func(*os.File) error) (*os.File, error) {
	if err := check(top); err != nil {
		return nil, err
	}
	cur := top
	defer func() {
		if cur != top {
			cur.Close()
		}
	}()
	for rest := rel; rest != "." && rest != ""; {
		var name string
		name, rest, _ = strings.Cut(rest, string(os.PathSeparator))
		fd, err := openDirAt(int(cur.Fd()), name)
		if err != nil {
			return nil, &os.PathError{Op: "mkdirall", Path: rel, Err: err}
		}
		next := os.NewFile(uintptr(fd), name)
		if cur != top {
			cur.Close()
		}
		cur = next
		if err := check(cur); err != nil {
			return nil, err
		}
	}
	// The walk's handles only resolve names (O_PATH on Linux): the one
	// returned is the last one opened again for reading, by ".", a name
	// no rename changes.
	fd, err := Retry(func() (int, error) { return unix.Openat(int(cur.Fd()), ".", DirFlags|unix.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: rel, Err: err}
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// openDirAt opens the directory name of dir to resolve names in, making it
// when it is missing, never through a symlink (see MkdirAllAt).
func openDirAt(dir int, name string) (int, error) {
	for races := 0; ; races++ {
		fd, err := Retry(func() (int, error) { return unix.Openat(dir, name, dirOpenFlags|unix.O_NOFOLLOW, 0) })
		switch err {
		case nil:
			return fd, nil
		case unix.ENOENT:
			_, err = Retry(func() (int, error) { return 0, unix.Mkdirat(dir, name, 0o777) })
			if err != nil && err != unix.EEXIST {
				return -1, err
			}
		case unix.ELOOP, unix.ENOTDIR: // a symlink or a file there now
		default:
			return -1, err
		}
		if races == maxRaces {
			return -1, ErrChanged
		}
	}
}
