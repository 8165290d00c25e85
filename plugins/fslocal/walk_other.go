//go:build !unix

package fslocal

import (
	"os"
	"path/filepath"
	"strings"
)

// walker resolves names below one directory by their path from it, through
// the root's handle (os.Root refuses every name that leaves it). A step
// costs a walk from the top, which the platform's path length bounds.
type walker struct{ r *root }

func openWalker(r *root) (walker, error) { return walker{r: r}, nil }

func (w walker) close() error { return nil }

func (w walker) top() cursor { return cursor{r: w.r} }

func (w walker) reopen(names []string) (cursor, error) {
	return cursor{r: w.r, dir: filepath.Join(names...)}, nil
}

// cursor is a directory reached by a walk, by its name below the root.
type cursor struct {
	r   *root
	dir string
}

func (c cursor) close() {}

func (c cursor) name(child string) string { return c.r.file(filepath.Join(c.dir, child)) }

func (c cursor) kind(name string) (kind, error) {
	var fi os.FileInfo
	var err error
	if c.r.dir == nil {
		fi, err = os.Lstat(c.name(name))
	} else {
		fi, err = c.r.dir.Lstat(c.name(name))
	}
	switch {
	case err != nil:
		return kindOther, err
	case fi.Mode()&os.ModeSymlink != 0:
		return kindLink, nil
	case fi.IsDir():
		return kindDir, nil
	}
	return kindOther, nil
}

func (c cursor) readlink(name string) (string, error) {
	if c.r.dir == nil {
		return os.Readlink(c.name(name))
	}
	return c.r.dir.Readlink(c.name(name))
}

func (c cursor) enter(name string) (cursor, error) {
	return cursor{r: c.r, dir: filepath.Join(c.dir, name)}, nil
}

// hostRootOf returns the root of path's volume, by absolute names, and the
// name of path in it.
func hostRootOf(path string) (*root, string, error) {
	vol := filepath.VolumeName(path) + string(filepath.Separator)
	r := &root{name: vol, path: vol}
	r.walk = walker{r: r}
	return r, strings.TrimPrefix(path, vol), nil
}
