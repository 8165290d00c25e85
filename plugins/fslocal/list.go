package fslocal

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

// ListDir returns the direct children of the directory at t, in directory
// order. Each child is typed by a stat that follows symlinks: a broken link,
// a socket, a FIFO or a device is "other", and a link to a directory is a
// directory. A child that fails to stat for any other reason (a symlink
// loop, EACCES) fails the whole listing; a link that leaves the root is
// "other", with nothing of its target reported. File contents are never
// read. Staging directories (of writes in progress, or left by a crash)
// are not children.
func (f *FS) ListDir(ctx context.Context, t fs.Target) ([]fs.DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("list", err)
	}
	r, dirName, err := f.locate(t, false)
	if err != nil {
		return nil, osError("list", t.Path, err)
	}
	dir, err := r.open(dirName, confine.DirFlags, 0)
	if err != nil {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, fs.NotFound("list", t.Path)
		case errors.Is(err, syscall.ENOTDIR):
			return nil, fs.NotDirectory("list", t.Path)
		}
		return nil, osError("list", t.Path, err)
	}
	defer dir.Close()
	if fi, err := dir.Stat(); err == nil && !fi.IsDir() { // where no O_DIRECTORY
		return nil, fs.NotDirectory("list", t.Path)
	}
	children, err := dir.ReadDir(-1)
	if err != nil {
		return nil, osError("list", t.Path, err)
	}
	children = slices.DeleteFunc(children, isStagingEntry)
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("list", err)
	}
	entries := make([]fs.DirEntry, len(children))
	var st confine.Stat
	for i, child := range children {
		if err := ctx.Err(); err != nil {
			return nil, fs.Aborted("list", err)
		}
		raw := child.Name()
		name := displayName(raw)
		e := fs.DirEntry{
			Name:   name,
			Type:   fs.TypeOther,
			Target: fs.Target{Key: confine.Join(t.Key, raw), Path: confine.Join(t.Path, name)},
			Size:   -1,
		}
		childName := confine.Join(dirName, raw)
		if child.Type()&os.ModeSymlink == 0 && confine.LstatAt(int(dir.Fd()), raw, &st) == nil && !confine.IsSymlink(&st) {
			// Not a link: its stat needs no resolution (and takes no
			// more of a confined root's handle than the directory's).
			setStat(&e, &st)
			entries[i] = e
			continue
		}
		if child.Type()&os.ModeSymlink != 0 {
			rel, _ := r.dir.Rel(e.Target.Key)
			real, err := r.dir.Resolve(ctx, rel)
			switch {
			case err == nil:
				rel, _ = r.dir.Rel(real)
				e.Target.Key, childName = real, r.dir.File(rel)
			case ctx.Err() != nil:
				return nil, fs.Aborted("list", ctx.Err())
			case r.dir.IsEscape(err):
				// A link out of the root: its target is nothing the
				// provider may report on.
				entries[i] = e
				continue
			default:
				return nil, osError("list", e.Target.Path, err)
			}
		}
		if err := r.stat(childName, &st); err != nil {
			if !errors.Is(err, os.ErrNotExist) { // a broken link
				return nil, osError("list", e.Target.Path, err)
			}
		} else {
			setStat(&e, &st)
		}
		entries[i] = e
	}
	return entries, nil
}

// setStat types e by st, and gives it st's version and, for a file, size.
func setStat(e *fs.DirEntry, st *confine.Stat) {
	e.Type, e.Version = typeOf(st), versionOf(st)
	e.ModTime = confine.ModTime(st)
	if e.Type == fs.TypeFile {
		e.Size = st.Size
	}
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
