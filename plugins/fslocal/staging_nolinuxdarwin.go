//go:build !linux && !darwin

package fslocal

import (
	"context"
	"os"
	"path/filepath"
	"runtime"

	"github.com/gordis-run/gordis/internal/confine"
)

// On other systems the staging directories are neither locked nor swept
// (a sweep cannot tell a live writer's from a dead one's), a replacement
// keeps neither owner nor extended attributes, and a read-only target is
// left for the rename to refuse. The staged file is closed before the
// rename, which Windows refuses for an open file. The staging's steps are
// named through the root (os.Root), not relative to the directory's
// handle: the directory is checked against the read-only roots once it is
// open, but a directory swapped for a symlink after that check can still
// lead the steps elsewhere inside the root.

const stagingLocked = false

// parentDir is the directory a staging works in: its handle, checked, and
// its name in its root, which the staging's steps go through.
type parentDir struct {
	file *os.File
	root *root
	name string
}

// stageDir is a staging directory, by its name in the root.
type stageDir struct{ name string }

// openParent makes the directory dir of the root r and what is missing
// above it, opens it, and refuses it when it is a read-only root's own
// directory (see notReadOnly).
func (f *FS) openParent(_ context.Context, r *root, dir string) (parentDir, error) {
	name := r.dir.File(dir)
	if err := r.refuse(r.dir.MkdirAll(name, 0o777)); err != nil {
		return parentDir{}, err
	}
	file, err := r.open(name, confine.DirFlags, 0)
	if err != nil {
		return parentDir{}, err
	}
	if err := f.notReadOnly(file); err != nil {
		file.Close()
		return parentDir{}, err
	}
	return parentDir{file, r, name}, nil
}

// mkstage makes the staging directory name, 0700 whatever the umask.
func (p parentDir) mkstage(name string) (stageDir, error) {
	s := stageDir{filepath.Join(p.name, name)}
	if err := p.root.refuse(p.root.dir.Mkdir(s.name, 0o700)); err != nil {
		return stageDir{}, err
	}
	return s, p.root.refuse(p.root.dir.Chmod(s.name, 0o700))
}

// create makes the staged file in s, exclusively.
func (p parentDir) create(s stageDir) (*os.File, error) {
	return p.root.open(filepath.Join(s.name, stagedFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

// rename puts the staged file of s in place of target.
func (p parentDir) rename(s stageDir, target string) error {
	return p.root.refuse(p.root.dir.Rename(filepath.Join(s.name, stagedFile), filepath.Join(p.name, target)))
}

// remove removes the staging directory s and what is in it.
func (p parentDir) remove(s stageDir) error { return p.root.refuse(p.root.dir.RemoveAll(s.name)) }

// close closes p's handle.
func (p parentDir) close(stageDir) {
	if p.file != nil {
		p.file.Close()
	}
}

// syncDir makes a rename in the directory durable. Windows cannot flush a
// directory handle; its renames are journaled by NTFS instead.
func syncDir(dir *os.File) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	return dir.Sync()
}

// isEntry is true: the stat here has no identity to compare.
func isEntry(*os.File, string, *confine.Stat) bool { return true }

func writable(*os.File, string) error { return nil }

func inheritReplaced(*os.File, string, *os.File) (release func()) { return func() {} }

func lockStaging(*os.File) {}

func holdSetup(context.Context, *os.File) error { return nil }

func releaseSetup(*os.File) {}

func sweep(context.Context, *os.File) (removed, busy int, err error) { return 0, 0, nil }
