package yamlpatch

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrChanged is the error, in an *fs.PathError, of ReplaceFile when the
// file no longer holds what the caller read.
var ErrChanged = errors.New("file changed since it was read")

// ReplaceFile replaces the file name with data atomically, if it still
// holds old: a reader sees the old content or the new, never a part. The
// data goes to a temporary file in the same directory, is synced and takes
// the file's mode; then the file is read again and, if it still equals
// old, the temporary file is renamed over it. Otherwise ReplaceFile
// returns an error matching ErrChanged and leaves the file alone, so that
// the caller can redo its edit on the new content.
//
// The check comes after the write and its sync, the slow part, so a save
// by someone else is lost only if it lands between the check and the
// rename, one read apart: a rename cannot compare and swap, and an editor
// takes no lock.
//
// A symlink at name is followed, so the file it points to is replaced and
// the link kept.
func ReplaceFile(name string, old, data []byte) (err error) {
	name, err = filepath.EvalSymlinks(name)
	if err != nil {
		return err
	}
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(fi.Mode().Perm()); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	now, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if !bytes.Equal(now, old) {
		return &fs.PathError{Op: "replace", Path: name, Err: ErrChanged}
	}
	if err = os.Rename(f.Name(), name); err != nil {
		return err
	}
	// The rename is durable once the directory is synced; not every
	// system can sync a directory, and the data is in place either way.
	if dir, err := os.Open(filepath.Dir(name)); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}
