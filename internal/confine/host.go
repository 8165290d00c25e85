package confine

import "os"

// A Host is the unconfined counterpart of a [Root]: the host's filesystem
// below a volume's top directory, by absolute names, as the process may
// reach it. Nothing leads out of it, so nothing is refused: ".." stops at
// the top, as in the kernel, and a symlink is followed wherever it leads.
// It has a Root's methods, so a caller may hold either.
type Host struct{ tree }

// NewHost returns the Host below top, a volume's top directory.
func NewHost(top string) *Host {
	h := &Host{tree{name: top, path: top}}
	h.res = pathResolver{&h.tree, looker{}}
	return h
}

// Close does nothing: a Host holds no handle.
func (h *Host) Close() error { return nil }

// File is the name of rel for the Host's methods: its absolute key.
func (h *Host) File(rel string) string { return h.Key(rel) }

// SameDir is false: a Host is a view of the filesystem, not a directory.
func (h *Host) SameDir(os.FileInfo) bool { return false }

// IsEscape is false: nothing leaves a Host.
func (h *Host) IsEscape(error) bool { return false }

// Stat, Lstat, OpenFile, MkdirAll, Mkdir, Chmod, Rename and RemoveAll are
// os's, on absolute names.
func (h *Host) Stat(name string) (Stat, error) {
	var st Stat
	err := statPath(name, &st)
	return st, err
}

func (h *Host) Lstat(name string) (Stat, error) {
	var st Stat
	err := lstatPath(name, &st)
	return st, err
}

func (h *Host) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

func (h *Host) MkdirAll(name string, perm os.FileMode) error { return os.MkdirAll(name, perm) }

func (h *Host) Mkdir(name string, perm os.FileMode) error { return os.Mkdir(name, perm) }

func (h *Host) Chmod(name string, mode os.FileMode) error { return os.Chmod(name, mode) }

func (h *Host) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (h *Host) RemoveAll(name string) error { return os.RemoveAll(name) }
