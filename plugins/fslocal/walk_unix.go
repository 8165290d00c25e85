//go:build unix

package fslocal

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdWalker resolves names below a confined root by descriptors: each step
// is an lstat and an open relative to the directory reached so far, so a
// step costs the same at any depth.
type fdWalker struct{ fd int }

func openWalker(r *root) (walker, error) {
	fd, err := retry(func() (int, error) { return unix.Open(r.path, dirOpenFlags, 0) })
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: r.path, Err: err}
	}
	return fdWalker{fd: fd}, nil
}

func (w fdWalker) close() error { return unix.Close(w.fd) }

func (w fdWalker) top() cursor { return fdCursor{fd: w.fd} }

// reopen walks from the top to the real directory names, refusing symlinks
// on the way (they were not there when the names were resolved).
func (w fdWalker) reopen(names []string) (cursor, error) {
	var c cursor = w.top()
	for _, name := range names {
		next, err := c.enter(name)
		c.close()
		if err != nil {
			return nil, err
		}
		c = next
	}
	return c, nil
}

// fdCursor is a directory reached by a walk; own says it is not the top.
type fdCursor struct {
	fd  int
	own bool
}

func (c fdCursor) close() {
	if c.own {
		unix.Close(c.fd)
	}
}

func (c fdCursor) kind(name string) (kind, error) {
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

func (c fdCursor) readlink(name string) (string, error) {
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
func (c fdCursor) enter(name string) (cursor, error) {
	fd, err := retry(func() (int, error) { return unix.Openat(c.fd, name, dirOpenFlags|unix.O_NOFOLLOW, 0) })
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return fdCursor{fd: fd, own: true}, nil
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
