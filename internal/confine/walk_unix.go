//go:build unix

package confine

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// fdWalker resolves names below a confined root by descriptors: each step
// is an lstat and an open relative to the directory reached so far, so a
// step costs the same at any depth. The root's descriptor is counted while
// a walk or an openat2 uses it, so closing the provider never lets them
// run on a descriptor number the process has reused for another file.
type fdWalker struct {
	mu     sync.Mutex
	fd     int
	refs   int
	closed bool
}

// openWalker opens the root's descriptor through its os.Root, not by its
// name again: both are then one directory, even when the name was swapped
// for another directory while the root was opening.
func openWalker(r *Root) (walker, error) {
	top, err := r.dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer top.Close()
	fd, err := Retry(func() (int, error) { return unix.Openat(int(top.Fd()), ".", dirOpenFlags, 0) })
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: r.path, Err: err}
	}
	return &fdWalker{fd: fd}, nil
}

func (w *fdWalker) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.refs == 0 {
		return unix.Close(w.fd)
	}
	return nil
}

// top holds the root's descriptor until the cursor is closed; once the
// walker is closed its cursor's calls fail with EBADF.
func (w *fdWalker) top() cursor {
	fd, ok := w.acquire()
	if !ok {
		return fdCursor{fd: -1}
	}
	return fdCursor{fd: fd, top: w}
}

// acquire holds the root's descriptor until release; false once closed.
func (w *fdWalker) acquire() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return -1, false
	}
	w.refs++
	return w.fd, true
}

func (w *fdWalker) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refs--; w.refs == 0 && w.closed {
		unix.Close(w.fd)
	}
}

// reopen walks from the top to the real directory names, refusing symlinks
// on the way (they were not there when the names were resolved).
func (w *fdWalker) reopen(names []string) (cursor, error) {
	c := w.top()
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

// fdCursor is a directory reached by a walk: its own descriptor, or the
// root's (top is then the walker that lent it).
type fdCursor struct {
	fd  int
	top *fdWalker
}

func (c fdCursor) close() {
	switch {
	case c.top != nil:
		c.top.release()
	case c.fd >= 0:
		unix.Close(c.fd)
	}
}

func (c fdCursor) kind(name string) (kind, error) {
	var st unix.Stat_t
	if _, err := Retry(func() (int, error) { return 0, unix.Fstatat(c.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
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
		n, err := Retry(func() (int, error) { return unix.Readlinkat(c.fd, name, buf) })
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
	fd, err := Retry(func() (int, error) { return unix.Openat(c.fd, name, dirOpenFlags|unix.O_NOFOLLOW, 0) })
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return fdCursor{fd: fd}, nil
}

// Retry repeats a system call interrupted by a signal, as package os does.
func Retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != unix.EINTR {
			return n, err
		}
	}
}
