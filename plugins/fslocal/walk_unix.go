//go:build unix

package fslocal

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// walker resolves names below one directory by descriptors: each step is
// an lstat and an open relative to the directory reached so far, so a
// step costs the same at any depth.
type walker struct{ fd int }

func openWalker(r *root) (walker, error) {
	fd, err := retry(func() (int, error) { return unix.Open(r.path, dirOpenFlags, 0) })
	if err != nil {
		return walker{}, &os.PathError{Op: "open", Path: r.path, Err: err}
	}
	return walker{fd: fd}, nil
}

func (w walker) close() error { return unix.Close(w.fd) }

func (w walker) top() cursor { return cursor{fd: w.fd} }

// reopen walks from the top to the real directory names, refusing symlinks
// on the way (they were not there when the names were resolved).
func (w walker) reopen(names []string) (cursor, error) {
	c := w.top()
	for _, name := range names {
		next, err := c.enter(name)
		c.close()
		if err != nil {
			return cursor{}, err
		}
		c = next
	}
	return c, nil
}

// cursor is a directory reached by a walk; own says it is not the top.
type cursor struct {
	fd  int
	own bool
}

func (c cursor) close() {
	if c.own {
		unix.Close(c.fd)
	}
}

func (c cursor) kind(name string) (kind, error) {
	var st unix.Stat_t
	if _, err := retry(func() (int, error) { return 0, unix.Fstatat(c.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return kindOther, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return kindLink, nil
	case unix.S_IFDIR:
		return kindDir, nil
	}
	return kindOther, nil
}

func (c cursor) readlink(name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := retry(func() (int, error) { return unix.Readlinkat(c.fd, name, buf) })
		if err != nil {
			return "", &os.PathError{Op: "readlink", Path: name, Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// enter opens the child directory name; a symlink there is refused.
func (c cursor) enter(name string) (cursor, error) {
	fd, err := retry(func() (int, error) { return unix.Openat(c.fd, name, dirOpenFlags|unix.O_NOFOLLOW, 0) })
	if err != nil {
		return cursor{}, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return cursor{fd: fd, own: true}, nil
}

// retry repeats a system call interrupted by a signal, as package os does.
func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// host is the unconfined provider's root, the filesystem's: one handle on
// "/" for the process, never closed.
var host = sync.OnceValues(func() (*root, error) {
	r := &root{name: "/", path: "/"}
	var err error
	r.walk, err = openWalker(r)
	return r, err
})

// hostRootOf returns the host root and the name of the absolute path in it.
func hostRootOf(path string) (*root, string, error) {
	r, err := host()
	return r, path, err
}
