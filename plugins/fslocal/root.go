package fslocal

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

// A root is one directory tree the provider may reach: the space every
// operation under it goes through, and the provider's policy for it.
type root struct {
	dir       space
	readOnly  bool // list and read only
	workspace bool // the provider's cwd (messages say "the workspace")
}

// space is where a root's names are: a directory whose names cannot leave
// it (a confined provider's roots), or the host's filesystem below a
// volume's top, by absolute names (the unconfined provider's host roots).
type space interface {
	spaceOS
	Name() string
	Path() string
	Contains(path string) (string, bool)
	Rel(key string) (string, bool)
	Key(rel string) string
	File(rel string) string
	Resolve(ctx context.Context, rel string) (string, error)
	IsEscape(err error) bool
	SameDir(fi os.FileInfo) bool
	Stat(name string) (confine.Stat, error)
	Lstat(name string) (confine.Stat, error)
	OpenFile(name string, flag int, perm os.FileMode) (*os.File, error)
	MkdirAll(name string, perm os.FileMode) error
	Mkdir(name string, perm os.FileMode) error
	Chmod(name string, mode os.FileMode) error
	Rename(oldname, newname string) error
	RemoveAll(name string) error
	Close() error
}

var (
	_ space = (*confine.Root)(nil)
	_ space = (*confine.Host)(nil)
)

// openRoot opens the directory at name (absolute and clean) as a root.
func openRoot(name string, readOnly, workspace bool) (*root, error) {
	dir, err := confine.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &root{dir: dir, readOnly: readOnly, workspace: workspace}, nil
}

func (r *root) close() error { return r.dir.Close() }

// refusal is an operation a root refused: its name leaves the root, or it
// writes under a read-only root. osError turns it into FS_SANDBOX_DENIED.
type refusal struct {
	root *root
	err  error
}

func (e *refusal) Error() string { return e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }

// refuse marks err as the root's refusal when it says a name left the root.
func (r *root) refuse(err error) error {
	if err != nil && r.dir.IsEscape(err) {
		return &refusal{r, err}
	}
	return err
}

// denied is the refusal of a path outside every root, or led out of the
// root r by a symlink, or (write) under a read-only root. One form names
// the path and the root:
//
//	cannot read "/etc/hostname": outside the workspace "/tmp/ws"
//	cannot write "/srv/docs/a.md": the root "/srv/docs" is read-only
func (r *root) denied(verb, path string, cause error) *fs.Error {
	noun := "the root"
	if r.workspace {
		noun = "the workspace"
	}
	reason := `outside ` + noun + ` "` + r.dir.Name() + `"`
	if cause == errReadOnly {
		reason = noun + ` "` + r.dir.Name() + `" is read-only`
	}
	return &fs.Error{Code: fs.CodeSandboxDenied, Message: "cannot " + verb + ` "` + fs.Clip(path) + `": ` + reason, Err: cause}
}

var errReadOnly = errors.New("read-only root")

// ---- operations by name, a name's escape made the root's refusal ---------------

func (r *root) stat(name string, st *confine.Stat) error {
	var err error
	*st, err = r.dir.Stat(name)
	return r.refuse(err)
}

func (r *root) lstat(name string, st *confine.Stat) error {
	var err error
	*st, err = r.dir.Lstat(name)
	return r.refuse(err)
}

func (r *root) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	file, err := r.dir.OpenFile(name, flag, perm)
	return file, r.refuse(err)
}

// slashRoot is the host root of the paths without a volume name.
var slashRoot = hostRoot(string(filepath.Separator))

// hostRoot is the unconfined provider's root at top, a volume's top
// directory: it reaches the filesystem by absolute names, as the process
// may.
func hostRoot(top string) *root { return &root{dir: confine.NewHost(top)} }

// hostRootOf returns the host root of the absolute path and the path's
// name below it.
func hostRootOf(path string) (*root, string) {
	vol := filepath.VolumeName(path)
	if vol == "" {
		return slashRoot, path
	}
	return hostRoot(vol + string(filepath.Separator)), path[len(vol):]
}
