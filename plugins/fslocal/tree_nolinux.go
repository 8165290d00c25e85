//go:build !linux

package fslocal

import (
	"io"
	"os"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

// treeDir is a directory of a walk by its name for the root's operations:
// os.Root keeps every step inside a confined root, but, unlike a walk by
// descriptors, follows a directory swapped for a symlink that stays inside.
type treeDir struct{ name string }

func (w *treeWalk) openTop() (*treeDir, error) { return &treeDir{w.name}, nil }

func (w *treeWalk) enter(dir *treeDir, name string) (*treeDir, error) {
	return &treeDir{w.join(dir, name)}, nil
}

func (w *treeWalk) close(*treeDir) {}

func (w *treeWalk) join(dir *treeDir, name string) string {
	if dir.name == "." {
		return name
	}
	return confine.Join(dir.name, name)
}

func (w *treeWalk) read(dir *treeDir) (*dirList, error) {
	file, err := w.root.open(dir.name, confine.DirFlags, 0)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var c collector
	for {
		children, err := file.ReadDir(1024)
		for _, child := range children {
			if err := c.add(child.Name(), modeType(child.Type())); err != nil {
				c.abandon()
				return nil, err
			}
		}
		if err == io.EOF {
			return c.list()
		}
		if err != nil {
			c.abandon()
			return nil, err
		}
	}
}

// modeType is the walk's type of a directory entry's mode.
func modeType(m os.FileMode) fs.Type {
	switch {
	case m&os.ModeSymlink != 0:
		return fs.TypeSymlink
	case m.IsDir():
		return fs.TypeDirectory
	case m.IsRegular():
		return fs.TypeFile
	}
	return fs.TypeOther
}

func (w *treeWalk) lstat(dir *treeDir, name string, st *confine.Stat) error {
	return w.root.lstat(w.join(dir, name), st)
}

// openFile opens the regular file at name when it is not a symlink; the
// open itself may follow one swapped in meanwhile, inside the root.
func (w *treeWalk) openFile(name string) (*sizedFile, error) {
	var st confine.Stat
	if err := w.root.lstat(name, &st); err != nil {
		return nil, err
	}
	if !confine.IsRegular(&st) {
		return nil, errNotRegular
	}
	file, err := w.root.open(name, confine.ReadFlags, 0)
	if err != nil {
		return nil, err
	}
	return openChecked(file)
}

// openChecked finishes an open for reading: file must be a regular file.
func openChecked(file *os.File) (*sizedFile, error) {
	var st confine.Stat
	if err := confine.Fstat(file, &st); err != nil {
		file.Close()
		return nil, err
	}
	if !confine.IsRegular(&st) {
		file.Close()
		return nil, errNotRegular
	}
	return &sizedFile{r: file, left: st.Size}, nil
}
