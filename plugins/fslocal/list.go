package fslocal

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"time"
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
func (f *FS) ListDir(ctx context.Context, t fs.Target) (_ []fs.DirEntry, err error) {
	if err := f.calls.enter("list", t.Path); err != nil {
		return nil, err
	}
	defer f.calls.done("list", t.Path, &err)
	var entries []fs.DirEntry
	err = f.children(ctx, t, nil, func(e *fs.DirEntry) error {
		entries = append(entries, *e)
		return nil
	})
	return entries, err
}

var _ fs.NameLister = (*FS)(nil)

// ListNames lists the children as ListDir does, a batch of names at a
// time, and vouches for the listing with the directory's version when the
// directory did not change while it was read and last changed more than
// settled ago: a filesystem's clock moves in steps (a few milliseconds on
// Linux), so a change made in the same step as the one before it would not
// change the version, and a listing of a directory that changed in the
// last step could miss it.
func (f *FS) ListNames(ctx context.Context, t fs.Target, fn func(name string, typ fs.Type) error) (_ fs.Version, err error) {
	if err := f.calls.enter("list", t.Path); err != nil {
		return "", err
	}
	defer f.calls.done("list", t.Path, &err)
	start := time.Now()
	var stats [2]confine.Stat
	err = f.children(ctx, t, &stats, func(e *fs.DirEntry) error { return fn(e.Name, e.Type) })
	if err != nil {
		return "", err
	}
	v := versionOf(&stats[0])
	if versionOf(&stats[1]) != v || !confine.ModTime(&stats[0]).Before(start.Add(-settled)) {
		return "", nil
	}
	return v, nil
}

// settled is how long ago a directory must have changed for ListNames to
// vouch for its listing, far above any filesystem's clock step.
const settled = 2 * time.Second

// children calls fn with each child of the directory at t, in directory
// order, reading the names a batch at a time. stats, if not nil, gets the
// directory's own stat, taken before its names are read and after.
func (f *FS) children(ctx context.Context, t fs.Target, stats *[2]confine.Stat, fn func(e *fs.DirEntry) error) error {
	if err := ctx.Err(); err != nil {
		return fs.Aborted("list", err)
	}
	r, dirName, err := f.locate(t, false)
	if err != nil {
		return osError("list", t.Path, err)
	}
	dir, err := r.open(dirName, confine.DirFlags, 0)
	if err != nil {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return fs.NotFound("list", t.Path)
		case errors.Is(err, syscall.ENOTDIR):
			return fs.NotDirectory("list", t.Path)
		}
		return osError("list", t.Path, err)
	}
	defer dir.Close()
	var st confine.Stat
	if err := confine.Fstat(dir, &st); err != nil {
		return osError("list", t.Path, err)
	}
	if typeOf(&st) != fs.TypeDirectory { // where no O_DIRECTORY
		return fs.NotDirectory("list", t.Path)
	}
	if stats != nil {
		stats[0] = st
	}
	for {
		batch, err := dir.ReadDir(listBatch)
		if err != nil && err != io.EOF {
			return osError("list", t.Path, err)
		}
		for _, child := range batch {
			if err := ctx.Err(); err != nil {
				return fs.Aborted("list", err)
			}
			if isStagingEntry(child) {
				continue
			}
			e, err := f.child(ctx, r, dir, dirName, t, child)
			if err != nil {
				return err
			}
			if err := fn(&e); err != nil {
				return err
			}
		}
		if err == io.EOF || len(batch) == 0 {
			break
		}
	}
	if stats != nil {
		if err := confine.Fstat(dir, &stats[1]); err != nil {
			return osError("list", t.Path, err)
		}
	}
	return nil
}

// listBatch is how many names a listing reads at a time.
const listBatch = 1024

// child types and stats one child of dir, the directory at dirName below
// r, listed at t.
func (f *FS) child(ctx context.Context, r *root, dir *os.File, dirName string, t fs.Target, child os.DirEntry) (fs.DirEntry, error) {
	raw := child.Name()
	name := displayName(raw)
	e := fs.DirEntry{
		Name:   name,
		Type:   fs.TypeOther,
		Target: fs.Target{Key: confine.Join(t.Key, raw), Path: confine.Join(t.Path, name)},
		Size:   -1,
	}
	var st confine.Stat
	childName := confine.Join(dirName, raw)
	if child.Type()&os.ModeSymlink == 0 && confine.LstatAt(int(dir.Fd()), raw, &st) == nil && !confine.IsSymlink(&st) {
		// Not a link: its stat needs no resolution (and takes no
		// more of a confined root's handle than the directory's).
		setStat(&e, &st)
		return e, nil
	}
	if child.Type()&os.ModeSymlink != 0 {
		rel, _ := r.dir.Rel(e.Target.Key)
		real, err := r.dir.Resolve(ctx, rel)
		switch {
		case err == nil:
			rel, _ = r.dir.Rel(real)
			e.Target.Key, childName = real, r.dir.File(rel)
		case ctx.Err() != nil:
			return e, fs.Aborted("list", ctx.Err())
		case r.dir.IsEscape(err):
			// A link out of the root: its target is nothing the
			// provider may report on.
			return e, nil
		default:
			return e, osError("list", e.Target.Path, err)
		}
	}
	if err := r.stat(childName, &st); err != nil {
		if !errors.Is(err, os.ErrNotExist) { // a broken link
			return e, osError("list", e.Target.Path, err)
		}
	} else {
		setStat(&e, &st)
	}
	return e, nil
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
