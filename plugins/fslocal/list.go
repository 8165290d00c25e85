package fslocal

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/gordis-run/gordis/plugins/fs"
)

// ListDir returns the direct children of the directory at t, in directory
// order. Each child is typed by a stat that follows symlinks: a broken link,
// a socket, a FIFO or a device is "other", and a link to a directory is a
// directory. A child that fails to stat for any other reason (a symlink
// loop, EACCES) fails the whole listing. File contents are never read.
// Staging directories (of writes in progress, or left by a crash) are
// not children.
func (f *FS) ListDir(ctx context.Context, t fs.Target) ([]fs.DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("list", err)
	}
	dir, err := os.OpenFile(t.Key, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ENOENT):
			return nil, fs.Errorf(fs.CodeNotFound, `cannot list "%s": not found`, t.Path)
		case errors.Is(err, syscall.ENOTDIR):
			return nil, fs.Errorf(fs.CodeNotDirectory, `cannot list "%s": not a directory`, t.Path)
		}
		return nil, osError("list", t.Path, err)
	}
	defer dir.Close()
	children, err := dir.ReadDir(-1)
	if err != nil {
		return nil, osError("list", t.Path, err)
	}
	children = slices.DeleteFunc(children, isStagingEntry)
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("list", err)
	}
	entries := make([]fs.DirEntry, len(children))
	prefix := t.Key + "/"
	if t.Key == "/" {
		prefix = "/"
	}
	var st syscall.Stat_t
	for i, child := range children {
		if err := ctx.Err(); err != nil {
			return nil, fs.Aborted("list", err)
		}
		raw := child.Name()
		name := displayName(raw)
		e := fs.DirEntry{
			Name:   name,
			Type:   fs.TypeOther,
			Target: fs.Target{Key: prefix + raw, Path: joinKey(t.Path, name)},
			Size:   -1,
		}
		if err := stat(e.Target.Key, &st); err != nil {
			if !errors.Is(err, syscall.ENOENT) { // ENOENT: a broken link
				return nil, osError("list", e.Target.Path, err)
			}
		} else {
			e.Type, e.Version = typeOf(&st), versionOf(&st)
			if e.Type == fs.TypeFile {
				e.Size = st.Size
			}
			if child.Type()&os.ModeSymlink != 0 {
				real, err := realpath(e.Target.Key)
				if err != nil {
					return nil, osError("list", e.Target.Path, err)
				}
				e.Target.Key = real
			}
		}
		entries[i] = e
	}
	return entries, nil
}

// displayName shows a name that is not valid UTF-8 with one U+FFFD per bad
// byte; the entry's key keeps the raw bytes, so it still stats and opens.
func displayName(raw string) string {
	if utf8.ValidString(raw) {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw) + 8)
	for _, r := range raw {
		b.WriteRune(r) // range yields utf8.RuneError for each invalid byte
	}
	return b.String()
}
