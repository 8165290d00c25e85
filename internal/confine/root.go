// Package confine keeps file operations inside a directory tree, as
// [os.Root] does, for the local provider: a [Root] resolves
// every name relative to a handle on its directory, so no symlink, "..",
// or directory swapped for a symlink can lead an operation out of the
// tree. Beside os.Root's methods it resolves a name to its real path
// (Resolve), stats into a caller's buffer ([Stat]) and tells its own
// directory by identity (SameDir); on Unix, [MkdirAllAt] opens a real
// directory name below a handle without following any symlink. On Linux the hot
// calls resolve in one openat2 (see beneath_linux.go). A [Host] has the same
// methods and confines nothing, for the unconfined provider.
package confine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// A Root is one directory tree and the handle every operation under it goes
// through: names are relative to the handle. [Host] is its unconfined
// counterpart.
type Root struct {
	tree
	dir *os.Root
	// escape is the cause dir reports for a name that leaves it, however
	// deep in *os.PathError wrappers (MkdirAll wraps one in another).
	// Package os does not export it; OpenRoot provokes it with a name that
	// escapes lexically (no I/O is done for it).
	escape error
	self   os.FileInfo // the directory dir is, for SameDir
}

// ErrEscape is the cause of a name refused because it leaves its root.
var ErrEscape = errors.New("path leaves the root")

// OpenRoot opens the directory at name (absolute and clean) as a root.
func OpenRoot(name string) (*Root, error) {
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, err
	}
	dir, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	r := &Root{tree: tree{name: name, path: real, confined: true}, dir: dir}
	if r.res, err = openResolver(r); err != nil {
		dir.Close()
		return nil, err
	}
	if r.self, err = dir.Stat("."); err != nil {
		r.Close()
		return nil, err
	}
	var pe *os.PathError
	if _, err := dir.Lstat(".."); errors.As(err, &pe) {
		r.escape = pe.Err
	}
	return r, nil
}

// SameDir reports whether fi, the stat of an open directory, is the
// root's own directory, however the caller reached it: a rename or a bind
// mount may give it other names.
func (r *Root) SameDir(fi os.FileInfo) bool { return os.SameFile(r.self, fi) }

// Close releases the root's handles; its methods fail after.
func (r *Root) Close() error {
	err := r.res.close()
	return errors.Join(r.dir.Close(), err)
}

// IsEscape reports a name refused because it leaves the root: by a
// symlink, or a directory replaced by one after the name was resolved.
func (r *Root) IsEscape(err error) bool {
	return errors.Is(err, ErrEscape) || r.escape != nil && errors.Is(err, r.escape)
}

// File is the name of rel (relative to the root) for the root's methods:
// rel itself (a Host's is the absolute key).
func (r *Root) File(rel string) string { return rel }

// ---- operations by name, relative to the handle --------------------------------

// Stat stats name, following symlinks. Like os.Root's, it returns what it
// read: a Stat passed by pointer through an interface (fslocal holds a Root
// or a Host as one) would be moved to the heap on every call.
func (r *Root) Stat(name string) (Stat, error) {
	var st Stat
	if err := r.statBeneath(name, &st); err == nil || !r.IsEscape(err) {
		return st, err
	}
	return Stat{}, r.statDangling(name)
}

// statDangling stats name once the kernel or os.Root refused to stat or
// open it as an escape. Both refuse every absolute symlink, even one whose
// target is inside the root, so a dangling link with such a target would
// be refused where a relative one is missing. Resolution tells them apart:
// a name that resolves to itself and is a symlink dangles, and is missing;
// any other name stays refused.
func (r *Root) statDangling(name string) error {
	key, err := r.Resolve(context.Background(), name)
	if err != nil {
		return err
	}
	if rel, _ := under(key, r.path); rel != filepath.Clean(name) {
		return ErrEscape
	}
	if st, err := r.Lstat(name); err != nil || !IsSymlink(&st) {
		return ErrEscape
	}
	return &os.PathError{Op: "stat", Path: name, Err: syscall.ENOENT}
}

// statRoot is statBeneath by os.Root: a resolution in user space.
func (r *Root) statRoot(name string, st *Stat) error {
	fi, err := r.dir.Stat(name)
	if err != nil {
		return err
	}
	fillStat(fi, st)
	return nil
}

// Lstat stats name itself, a final symlink not followed.
func (r *Root) Lstat(name string) (Stat, error) {
	var st Stat
	fi, err := r.dir.Lstat(name)
	if err != nil {
		return st, err
	}
	fillStat(fi, &st)
	return st, nil
}

// OpenFile opens name as os.OpenFile does; a dangling absolute symlink is
// missing (see statDangling).
func (r *Root) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	file, err := r.openBeneath(name, flag, perm)
	if err != nil && r.IsEscape(err) {
		return nil, r.statDangling(name)
	}
	return file, err
}

// MkdirAll, Mkdir, Chmod, Rename and RemoveAll are os.Root's.
func (r *Root) MkdirAll(name string, perm os.FileMode) error {
	return r.dir.MkdirAll(name, perm)
}

func (r *Root) Mkdir(name string, perm os.FileMode) error {
	return r.dir.Mkdir(name, perm)
}

func (r *Root) Chmod(name string, mode os.FileMode) error {
	return r.dir.Chmod(name, mode)
}

func (r *Root) Rename(oldname, newname string) error {
	return r.dir.Rename(oldname, newname)
}

func (r *Root) RemoveAll(name string) error {
	return r.dir.RemoveAll(name)
}
