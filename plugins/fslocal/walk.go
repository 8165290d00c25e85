package fslocal

import (
	"os"
	"path/filepath"

	"github.com/gordis-run/gordis/plugins/fs"
)

// walker starts the walks of resolution below one root.
type walker interface {
	// top is the root directory itself.
	top() cursor
	// reopen reaches the directory of real names below the root again.
	reopen(names []string) (cursor, error)
	close() error
}

// cursor is a directory a walk has reached.
type cursor interface {
	kind(name string) (kind, error)
	readlink(name string) (string, error)
	// enter reaches the child directory name.
	enter(name string) (cursor, error)
	close()
}

// pathWalker walks by the name of each step from the top: through the
// root's os.Root, which refuses every name that leaves it, or by absolute
// names on the host root. A step costs a lookup of its whole name, which
// the platform's path length bounds.
type pathWalker struct{ r *root }

func (w pathWalker) close() error { return nil }

func (w pathWalker) top() cursor { return pathCursor{r: w.r, dir: w.r.file("")} }

func (w pathWalker) reopen(names []string) (cursor, error) {
	return pathCursor{r: w.r, dir: w.r.file(filepath.Join(names...))}, nil
}

// pathCursor is a directory by its name for the root's operations ("" for
// the top of a confined root).
type pathCursor struct {
	r   *root
	dir string
}

func (c pathCursor) close() {}

func (c pathCursor) name(child string) string {
	if c.dir == "" {
		return child
	}
	return joinKey(c.dir, child)
}

func (c pathCursor) kind(name string) (kind, error) {
	var st fileStat
	if err := c.r.lstat(c.name(name), &st); err != nil {
		return kindOther, err
	}
	switch {
	case isSymlink(&st):
		return kindLink, nil
	case typeOf(&st) == fs.TypeDirectory:
		return kindDir, nil
	}
	return kindOther, nil
}

func (c pathCursor) readlink(name string) (string, error) {
	if c.r.dir == nil {
		return os.Readlink(c.name(name))
	}
	return c.r.dir.Readlink(c.name(name))
}

func (c pathCursor) enter(name string) (cursor, error) {
	return pathCursor{r: c.r, dir: c.name(name)}, nil
}

// slashRoot is the host root of the paths without a volume name.
var slashRoot = hostRoot(string(filepath.Separator))

// hostRoot is the unconfined provider's root at top, a volume's top
// directory: it reaches the filesystem by absolute names, as the process
// may.
func hostRoot(top string) *root {
	r := &root{name: top, path: top}
	r.walk = pathWalker{r}
	return r
}

// hostRootOf returns the host root of the absolute path and the path's
// name below it.
func hostRootOf(path string) (*root, string) {
	vol := filepath.VolumeName(path)
	if vol == "" {
		return slashRoot, path
	}
	return hostRoot(vol + string(filepath.Separator)), path[len(vol):]
}
