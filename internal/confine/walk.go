package confine

import (
	"os"
	"path/filepath"
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
// names on an unconfined root. A step costs a lookup of its whole name, which
// the platform's path length bounds.
type pathWalker struct{ r *Root }

func (w pathWalker) close() error { return nil }

func (w pathWalker) top() cursor { return pathCursor{r: w.r, dir: w.r.File("")} }

func (w pathWalker) reopen(names []string) (cursor, error) {
	return pathCursor{r: w.r, dir: w.r.File(filepath.Join(names...))}, nil
}

// pathCursor is a directory by its name for the root's operations ("" for
// the top of a confined root).
type pathCursor struct {
	r   *Root
	dir string
}

func (c pathCursor) close() {}

func (c pathCursor) name(child string) string {
	if c.dir == "" {
		return child
	}
	return Join(c.dir, child)
}

func (c pathCursor) kind(name string) (kind, error) {
	var st Stat
	if err := c.r.Lstat(c.name(name), &st); err != nil {
		return kindOther, err
	}
	switch {
	case IsSymlink(&st):
		return kindLink, nil
	case IsDir(&st):
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
