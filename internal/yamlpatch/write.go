package yamlpatch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces the file name with data atomically: a reader sees the
// old content or the new, never a part. The data goes to a temporary file
// in the same directory, is synced, takes the old file's mode (0644 for a
// new file) and is renamed over name. A symlink at name is followed, so
// the file it points to is replaced and the link kept.
func WriteFile(name string, data []byte) (err error) {
	if target, err := filepath.EvalSymlinks(name); err == nil {
		name = target
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(name); err == nil {
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
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
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
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
