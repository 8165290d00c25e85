package fs

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"slices"
	"strings"
	"time"
)

// SkipDir and SkipAll are io/fs's: a WalkFunc returns SkipDir on a
// directory to leave its contents out, and SkipAll to end the walk early;
// neither is an error of the walk.
var (
	SkipDir = iofs.SkipDir
	SkipAll = iofs.SkipAll
)

// WalkEntry is one entry a walk visits, typed as found: a symlink is
// TypeSymlink and is never followed.
type WalkEntry interface {
	// Path is the entry's name below the walked target, "/"-separated,
	// as stored (it may not be valid UTF-8); "" for the target itself.
	Path() string
	// Type is TypeFile (a regular file), TypeDirectory, TypeSymlink or
	// TypeOther. The target itself is typed through symlinks, as
	// Resolve followed them.
	Type() Type
	// Info reports the entry's size and modification time. It may be
	// called only while the WalkFunc given this entry runs.
	Info() (EntryInfo, error)
	// Open opens a regular file for searching, without following a
	// symlink. A Walker's reader yields the bytes as stored; the generic
	// walk's yields StreamText's decoded text, whose failures (a binary
	// file, invalid UTF-8) surface from Read as *Error with CodeNotText.
	// Open may be called from any goroutine, also after the WalkFunc and
	// the walk have returned, while the provider is open, so that files
	// are read in parallel with the walk.
	Open(ctx context.Context) (io.ReadCloser, error)
}

// EntryInfo is what WalkEntry.Info reports. Size is -1 and ModTime zero
// when unknown.
type EntryInfo struct {
	Size    int64
	ModTime time.Time
}

// WalkFunc is called for each entry of a walk, on one goroutine at a time.
// Returning SkipDir from a directory's call leaves its contents out,
// SkipAll ends the walk, any other error ends it and is returned by Walk.
type WalkFunc func(e WalkEntry) error

// Walker is an optional capability for search: a walk below a target that
// stays inside the provider's confinement, never descends through a
// symlink, and visits in a fixed order: the target first, then depth
// first, each directory's entries in byte order of their names, a
// directory's contents right after it. A target that is not a directory
// is visited alone. A directory that cannot be listed ends the walk with
// an *Error naming it (`cannot list "<p>": <reason>`); a missing target is
// CodeNotFound `cannot list "<p>": not found`. A provider may list
// directories ahead of the WalkFunc, in parallel, in bounded memory.
type Walker interface {
	Walk(ctx context.Context, t Target, fn WalkFunc) error
}

// Walk walks t with fsys's Walker when it has one, and otherwise with the
// seam's own methods: Stat, ListDir, an Lstat per child to tell symlinks
// apart, and StreamText for Open. Both visit the same entries in the same
// order; the generic walk reports a name that is not valid UTF-8 as
// ListDir shows it, a symlink's size and time as unknown, the target's
// time as unknown (Stat has none), and its Open decodes as StreamText
// does.
func Walk(ctx context.Context, fsys FileSystem, t Target, fn WalkFunc) error {
	if w, ok := fsys.(Walker); ok {
		return w.Walk(ctx, t, fn)
	}
	info, err := fsys.Stat(ctx, t)
	if err != nil {
		return err
	}
	if info == nil {
		return NotFound("list", t.Path)
	}
	top := &seamEntry{fsys: fsys, target: t, typ: info.Type, info: EntryInfo{Size: info.Size}}
	if err := fn(top); err != nil || info.Type != TypeDirectory {
		return ignoreSkip(err)
	}
	return ignoreSkip(walkDir(ctx, fsys, t, "", fn))
}

// walkDir visits the children of the directory dir, whose path below the
// walk's target is prefix.
func walkDir(ctx context.Context, fsys FileSystem, dir Target, prefix string, fn WalkFunc) error {
	children, err := fsys.ListDir(ctx, dir)
	if err != nil {
		return err
	}
	slices.SortFunc(children, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range children {
		if err := ctx.Err(); err != nil {
			return Aborted("list", err)
		}
		// ListDir types through symlinks (a dangling link is "other");
		// the walk must not: an Lstat tells a link from what it points to.
		// A confined provider refuses to lstat a link that leads out of
		// its trees; below a listed directory nothing else is refused.
		pi, err := fsys.Lstat(ctx, c.Target.Path, "")
		link := errors.Is(err, ErrSandboxDenied) || err == nil && pi != nil && pi.Type == TypeSymlink
		if err != nil && !link {
			return err
		}
		e := &seamEntry{fsys: fsys, target: c.Target, path: prefix + c.Name, typ: c.Type,
			info: EntryInfo{Size: c.Size, ModTime: c.ModTime}}
		if link {
			// What ListDir saw was the link's target.
			e.typ, e.info = TypeSymlink, EntryInfo{Size: -1}
		}
		err = fn(e)
		switch {
		case err == SkipDir:
			continue
		case err != nil:
			return err
		case e.typ == TypeDirectory:
			if err := walkDir(ctx, fsys, c.Target, e.path+"/", fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func ignoreSkip(err error) error {
	if err == SkipDir || err == SkipAll {
		return nil
	}
	return err
}

// seamEntry is an entry of the generic walk.
type seamEntry struct {
	fsys   FileSystem
	target Target
	path   string
	typ    Type
	info   EntryInfo
}

func (e *seamEntry) Path() string             { return e.path }
func (e *seamEntry) Type() Type               { return e.typ }
func (e *seamEntry) Info() (EntryInfo, error) { return e.info, nil }

func (e *seamEntry) Open(ctx context.Context) (io.ReadCloser, error) {
	if e.typ != TypeFile {
		return nil, NotRegularFile("read", e.target.Path)
	}
	return e.fsys.StreamText(ctx, e.target)
}

// NotFound is the failure of an operation on a path that does not exist:
// `cannot <verb> "<path>": not found` (CodeNotFound).
func NotFound(verb, path string) *Error {
	return &Error{Code: CodeNotFound, Message: "cannot " + verb + ` "` + Clip(path) + `": not found`}
}

// NotRegularFile is the failure of a file operation on a directory or a
// special file: `cannot <verb> "<path>": not a regular file`
// (CodeNotRegularFile).
func NotRegularFile(verb, path string) *Error {
	return &Error{Code: CodeNotRegularFile, Message: "cannot " + verb + ` "` + Clip(path) + `": not a regular file`}
}

// NotDirectory is the failure of a directory operation on something else:
// `cannot <verb> "<path>": not a directory` (CodeNotDirectory).
func NotDirectory(verb, path string) *Error {
	return &Error{Code: CodeNotDirectory, Message: "cannot " + verb + ` "` + Clip(path) + `": not a directory`}
}
