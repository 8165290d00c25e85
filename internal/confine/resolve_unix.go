//go:build unix

package confine

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// fdResolver resolves names below a confined root by descriptors: each step
// is an lstat and an open relative to the directory reached so far, so a
// step costs the same at any depth. The root's descriptor is counted while
// a resolution or an openat2 uses it, so closing the provider never lets them
// run on a descriptor number the process has reused for another file.
type fdResolver struct {
	mu     sync.Mutex
	fd     int
	refs   int
	closed bool
}

// openResolver opens the root's descriptor through its os.Root, not by its
// name again: both are then one directory, even when the name was swapped
// for another directory while the root was opening.
func openResolver(r *Root) (resolver, error) {
	top, err := r.dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer top.Close()
	fd, err := Retry(func() (int, error) { return unix.Openat(int(top.Fd()), ".", dirOpenFlags, 0) })
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: r.path, Err: err}
	}
	return &fdResolver{fd: fd}, nil
}

func (w *fdResolver) close() error {
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

// top holds the root's descriptor until the lookupDir is closed; once the
// resolver is closed its lookupDir's calls fail with EBADF.
func (w *fdResolver) top() lookupDir {
	fd, ok := w.acquire()
	if !ok {
		return fdDir{fd: -1}
	}
	return fdDir{fd: fd, top: w}
}

// acquire holds the root's descriptor until release; false once closed.
func (w *fdResolver) acquire() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return -1, false
	}
	w.refs++
	return w.fd, true
}

func (w *fdResolver) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refs--; w.refs == 0 && w.closed {
		unix.Close(w.fd)
	}
}

// reopen goes from the top to the real directory names, refusing symlinks
// on the way (they were not there when the names were resolved).
func (w *fdResolver) reopen(names []string) (lookupDir, error) {
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

// fdDir is a directory a resolution reached: its own descriptor, or the
// root's (top is then the resolver that lent it).
type fdDir struct {
	fd  int
	top *fdResolver
}

func (c fdDir) close() {
	switch {
	case c.top != nil:
		c.top.release()
	case c.fd >= 0:
		unix.Close(c.fd)
	}
}

func (c fdDir) kind(name string) (kind, error) {
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

func (c fdDir) readlink(name string) (string, error) {
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
func (c fdDir) enter(name string) (lookupDir, error) {
	fd, err := Retry(func() (int, error) { return unix.Openat(c.fd, name, dirOpenFlags|unix.O_NOFOLLOW, 0) })
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return fdDir{fd: fd}, nil
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
