// Package confine keeps file operations inside a directory tree, as
// [os.Root] does, for the local provider: a [Root] resolves
// every name relative to a handle on its directory, so no symlink, "..",
// or directory swapped for a symlink can lead an operation out of the
// tree. Beside os.Root's methods it resolves a name to its real path
// ([Root.Resolve]) and stats into a caller's buffer ([Stat]). On Linux the
// hot calls resolve in one openat2 (see beneath_linux.go).
package confine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// A Root is one directory tree and the handle every operation under it goes
// through: names are relative to the handle. An unconfined Root (see
// [Unconfined]) has no handle: it reaches the whole filesystem by absolute
// names, as the process may.
type Root struct {
	name string   // the directory as opened, absolute and clean
	path string   // its real path: every key under the root starts with it
	dir  *os.Root // nil when unconfined
	res  resolver // the platform's handle for resolution
	// escape is the cause dir reports for a name that leaves it, however
	// deep in *os.PathError wrappers (MkdirAll wraps one in another).
	// Package os does not export it; OpenRoot provokes it with a name that
	// escapes lexically (no I/O is done for it).
	escape error
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
	r := &Root{name: name, path: real, dir: dir}
	if r.res, err = openResolver(r); err != nil {
		dir.Close()
		return nil, err
	}
	var pe *os.PathError
	if _, err := dir.Lstat(".."); errors.As(err, &pe) {
		r.escape = pe.Err
	}
	return r, nil
}

// Unconfined returns the root at top, a volume's top directory, that
// confines nothing: its names are absolute, and ".." stops at top, as in
// the kernel. The unconfined provider works through it.
func Unconfined(top string) *Root {
	r := &Root{name: top, path: top}
	r.res = pathResolver{r}
	return r
}

// Close releases the root's handles; its methods fail after.
func (r *Root) Close() error {
	err := r.res.close()
	if r.dir != nil {
		err = errors.Join(r.dir.Close(), err)
	}
	return err
}

// Name is the directory as opened.
func (r *Root) Name() string { return r.name }

// Path is the directory's real path, which every key below it starts with.
func (r *Root) Path() string { return r.path }

// IsEscape reports a name refused because it leaves the root: by a
// symlink, or a directory replaced by one after the name was resolved.
func (r *Root) IsEscape(err error) bool {
	return errors.Is(err, ErrEscape) || r.escape != nil && errors.Is(err, r.escape)
}

// Contains reports whether the absolute clean path is the root or under it,
// in either spelling (as opened or real), and returns the rest relative
// to the root ("." for the root itself).
func (r *Root) Contains(path string) (string, bool) {
	for _, prefix := range [...]string{r.path, r.name} {
		if foldCase && len(path) >= len(prefix) && strings.EqualFold(path[:len(prefix)], prefix) {
			path = prefix + path[len(prefix):]
		}
		if rel, ok := under(path, prefix); ok {
			return rel, true
		}
	}
	return "", false
}

// Rel returns key relative to the root when key is the root's real path or
// below it.
func (r *Root) Rel(key string) (string, bool) { return under(key, r.path) }

// foldCase says the platform's paths name one file whatever their case, so
// a root is recognised in any spelling.
const foldCase = runtime.GOOS == "windows"

// under returns path relative to dir when path is dir or below it.
func under(path, dir string) (string, bool) {
	if path == dir {
		return ".", true
	}
	if !strings.HasPrefix(path, dir) {
		return "", false
	}
	rest := path[len(dir):]
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return rest, rest != ""
	}
	if !os.IsPathSeparator(rest[0]) {
		return "", false
	}
	return rest[1:], true
}

// File is the name of rel (relative to the root) for the root's methods:
// rel itself, or the absolute key on an unconfined root.
func (r *Root) File(rel string) string {
	if r.dir == nil {
		return r.Key(rel)
	}
	return rel
}

// Key is the identity of the file at rel, a real name below the root.
func (r *Root) Key(rel string) string {
	if rel == "." || rel == "" {
		return r.path
	}
	return Join(r.path, rel)
}

// Join appends one name to a clean absolute directory path.
func Join(dir, name string) string {
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// ---- operations by name (relative to the handle, absolute when unconfined) --

// Stat stats name, following symlinks, into st.
func (r *Root) Stat(name string, st *Stat) error {
	if r.dir == nil {
		return statPath(name, st)
	}
	if err := r.statBeneath(name, st); err == nil || !r.IsEscape(err) {
		return err
	}
	return r.statDangling(name, st)
}

// statDangling stats name once the kernel or os.Root refused to stat or
// open it as an escape. Both refuse every absolute symlink, even one whose
// target is inside the root, so a dangling link with such a target would
// be refused where a relative one is missing. Resolution tells them apart:
// a name that resolves to itself and is a symlink dangles, and is missing;
// any other name stays refused.
func (r *Root) statDangling(name string, st *Stat) error {
	key, err := r.Resolve(context.Background(), name)
	if err != nil {
		return err
	}
	if rel, _ := under(key, r.path); rel != filepath.Clean(name) {
		return ErrEscape
	}
	if err := r.Lstat(name, st); err != nil || !IsSymlink(st) {
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

// Lstat stats name itself, a final symlink not followed, into st.
func (r *Root) Lstat(name string, st *Stat) error {
	if r.dir == nil {
		return lstatPath(name, st)
	}
	fi, err := r.dir.Lstat(name)
	if err != nil {
		return err
	}
	fillStat(fi, st)
	return nil
}

// OpenFile opens name as os.OpenFile does; a dangling absolute symlink is
// missing (see statDangling).
func (r *Root) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if r.dir == nil {
		return os.OpenFile(name, flag, perm)
	}
	file, err := r.openBeneath(name, flag, perm)
	if err != nil && r.IsEscape(err) {
		var st Stat
		return nil, r.statDangling(name, &st)
	}
	return file, err
}

// MkdirAll, Mkdir, Chmod, Rename and RemoveAll are os.Root's, or os's on
// an unconfined root.
func (r *Root) MkdirAll(name string, perm os.FileMode) error {
	if r.dir == nil {
		return os.MkdirAll(name, perm)
	}
	return r.dir.MkdirAll(name, perm)
}

func (r *Root) Mkdir(name string, perm os.FileMode) error {
	if r.dir == nil {
		return os.Mkdir(name, perm)
	}
	return r.dir.Mkdir(name, perm)
}

func (r *Root) Chmod(name string, mode os.FileMode) error {
	if r.dir == nil {
		return os.Chmod(name, mode)
	}
	return r.dir.Chmod(name, mode)
}

func (r *Root) Rename(oldname, newname string) error {
	if r.dir == nil {
		return os.Rename(oldname, newname)
	}
	return r.dir.Rename(oldname, newname)
}

func (r *Root) RemoveAll(name string) error {
	if r.dir == nil {
		return os.RemoveAll(name)
	}
	return r.dir.RemoveAll(name)
}
