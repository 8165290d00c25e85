package fslocal

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

var _ fs.Walker = (*FS)(nil)

// Walk visits the tree at t as fs.Walker says, on directory handles: the
// target is opened through its root once, and every directory below it is
// opened relative to its parent's handle without following a symlink, so
// no name is resolved from the root again and nothing a symlink or a
// swapped directory points to is ever listed. Staging directories are not
// entries, as in ListDir. A directory that turns into something else
// between its listing and its visit (removed, swapped for a symlink) is
// visited as listed and its contents are left out. One walk holds a handle
// per level of the current path and the names of that path's directories,
// plus up to 2×GOMAXPROCS subdirectories listed ahead, in parallel, on
// other goroutines (the visits stay in order on the caller's).
func (f *FS) Walk(ctx context.Context, t fs.Target, fn fs.WalkFunc) (err error) {
	if err := f.calls.enter("list", t.Path); err != nil {
		return err
	}
	defer f.calls.done("list", t.Path, &err)
	if err := ctx.Err(); err != nil {
		return fs.Aborted("list", err)
	}
	r, name, err := f.locate(t, false)
	if err != nil {
		return osError("list", t.Path, err)
	}
	var st confine.Stat
	if err := r.stat(name, &st); err != nil {
		if isAbsent(err) {
			return fs.NotFound("list", t.Path)
		}
		return osError("list", t.Path, err)
	}
	w := &treeWalk{ctx: ctx, root: r, name: name, display: t.Path, fn: fn,
		ahead: make(chan struct{}, 2*runtime.GOMAXPROCS(0)), calls: &f.calls}
	top := &treeEntry{w: w, typ: typeOf(&st), info: entryInfo(&st)}
	if err := fn(top); err != nil || top.typ != fs.TypeDirectory {
		return skipped(err)
	}
	dir, err := w.openTop()
	if err != nil {
		if isAbsent(err) { // removed since the stat
			return fs.NotFound("list", t.Path)
		}
		return w.listFailed("", err)
	}
	defer w.close(dir)
	list, err := w.read(dir)
	if err != nil {
		return w.listFailed("", err)
	}
	defer list.close()
	return skipped(w.walk(dir, list, ""))
}

// skipped is the walk's result once fn returned err: SkipDir and SkipAll
// end it without an error.
func skipped(err error) error {
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

// treeWalk is one Walk: the root it runs in, the target's name for that
// root's operations and its display path.
type treeWalk struct {
	ctx     context.Context
	root    *root
	name    string
	display string
	fn      fs.WalkFunc
	ahead   chan struct{} // a slot per directory listed ahead of the walk
	calls   *callGate     // the provider's: an entry's Open is a call of its own
}

// dirent is a directory's entry as listed: its name as stored, typed
// without following a symlink.
type dirent struct {
	name string
	typ  fs.Type
}

// walk visits the entries of the directory dir, listed in list, whose
// path below the target is prefix ("" or ending in "/"), and below them:
// a window of entries at a time.
func (w *treeWalk) walk(dir *treeDir, list *dirList, prefix string) error {
	for {
		if err := w.visit(dir, list.ents, prefix); err != nil {
			return err
		}
		more, err := list.next()
		if err != nil {
			return w.listFailed(strings.TrimSuffix(prefix, "/"), err)
		}
		if !more {
			return nil
		}
	}
}

// visit visits the entries ents of the directory dir and below them.
func (w *treeWalk) visit(dir *treeDir, ents []dirent, prefix string) error {
	ahead := w.readAhead(dir, ents)
	defer ahead.drain()
	for i, d := range ents {
		if err := w.ctx.Err(); err != nil {
			return fs.Aborted("list", err)
		}
		e := &treeEntry{w: w, dir: dir, name: d.name, path: prefix + d.name, typ: d.typ}
		err := w.fn(e)
		switch {
		case err == fs.SkipDir:
			continue
		case err != nil:
			return err
		case d.typ != fs.TypeDirectory:
			continue
		}
		l := ahead.take(i)
		switch {
		case isAbsent(l.err) || errors.Is(l.err, syscall.ELOOP):
			continue // no longer the directory listed
		case l.err != nil:
			return w.listFailed(e.path, l.err)
		}
		err = w.walk(l.dir, l.list, e.path+"/")
		l.close(w)
		if err != nil {
			return err
		}
	}
	return nil
}

// listing is a child directory opened and listed, maybe ahead of the walk.
type listing struct {
	index int // in the parent's entries
	dir   *treeDir
	list  *dirList
	err   error
	done  chan struct{}
}

// list opens the child directory name of dir and lists it.
func (w *treeWalk) list(dir *treeDir, name string) *listing {
	l := &listing{}
	if l.dir, l.err = w.enter(dir, name); l.err == nil {
		if l.list, l.err = w.read(l.dir); l.err != nil {
			w.close(l.dir)
		}
	}
	return l
}

// close releases a listing that succeeded.
func (l *listing) close(w *treeWalk) {
	l.list.close()
	w.close(l.dir)
}

// readAhead lists the subdirectories of one directory before the walk
// reaches them, in their order, on other goroutines. The walk's ahead
// slots bound the listings done or running ahead across all levels, and
// with them the descriptors and names held beyond the current path's.
type readAhead struct {
	w       *treeWalk
	dir     *treeDir
	ents    []dirent
	next    int        // the first entry not yet considered
	pending []*listing // started, in entry order
}

func (w *treeWalk) readAhead(dir *treeDir, ents []dirent) *readAhead {
	a := &readAhead{w: w, dir: dir, ents: ents}
	a.fill()
	return a
}

// fill starts listings of the next subdirectories while slots are free.
func (a *readAhead) fill() {
	for ; a.next < len(a.ents); a.next++ {
		if a.ents[a.next].typ != fs.TypeDirectory {
			continue
		}
		select {
		case a.w.ahead <- struct{}{}:
		default:
			return
		}
		l := &listing{index: a.next, done: make(chan struct{})}
		go func(name string) {
			defer close(l.done)
			r := a.w.list(a.dir, name)
			l.dir, l.list, l.err = r.dir, r.list, r.err
		}(a.ents[a.next].name)
		a.pending = append(a.pending, l)
	}
}

// take returns the listing of the subdirectory at index i: the one started
// ahead, or one made now. Listings of the directories skipped before it
// are dropped.
func (a *readAhead) take(i int) *listing {
	defer a.fill()
	for len(a.pending) > 0 && a.pending[0].index <= i {
		l := a.pending[0]
		a.pending = a.pending[1:]
		a.release(l)
		if l.index == i {
			return l
		}
		if l.err == nil {
			l.close(a.w)
		}
	}
	if i >= a.next {
		a.next = i + 1
	}
	return a.w.list(a.dir, a.ents[i].name)
}

// release waits for the listing l and frees its slot.
func (a *readAhead) release(l *listing) {
	<-l.done
	<-a.w.ahead
}

// drain waits for the listings still ahead and closes them, so that the
// directory's descriptor, which they open children by, can be closed.
func (a *readAhead) drain() {
	for _, l := range a.pending {
		a.release(l)
		if l.err == nil {
			l.close(a.w)
		}
	}
	a.pending = nil
}

// listFailed maps the failure to list the directory at path below the
// target; the walk's own cancellation wins over what it caused.
func (w *treeWalk) listFailed(path string, err error) error {
	if cerr := w.ctx.Err(); cerr != nil {
		return fs.Aborted("list", cerr)
	}
	return osError("list", w.displayOf(path), w.root.refuse(err))
}

// displayOf is the display path of the entry at path below the target.
func (w *treeWalk) displayOf(path string) string {
	if path == "" {
		return w.display
	}
	return confine.Join(w.display, filepath.FromSlash(displayName(path)))
}

// nameOf is the root's name for the entry at path below the target.
func (w *treeWalk) nameOf(path string) string {
	if path == "" {
		return w.name
	}
	if w.name == "." {
		return filepath.FromSlash(path)
	}
	return confine.Join(w.name, filepath.FromSlash(path))
}

// treeEntry is an entry of Walk: the target itself (dir nil, typed and
// sized through symlinks), or a child of the open directory dir.
type treeEntry struct {
	w    *treeWalk
	dir  *treeDir
	name string
	path string
	typ  fs.Type
	info fs.EntryInfo // the target's
}

func (e *treeEntry) Path() string  { return e.path }
func (e *treeEntry) Type() fs.Type { return e.typ }

// Info stats the entry relative to its directory's handle, without
// following a symlink: a symlink is sized -1, with its own time.
func (e *treeEntry) Info() (fs.EntryInfo, error) {
	if e.dir == nil {
		return e.info, nil
	}
	var st confine.Stat
	if err := e.w.lstat(e.dir, e.name, &st); err != nil {
		if isAbsent(err) {
			return fs.EntryInfo{}, fs.NotFound("stat", e.w.displayOf(e.path))
		}
		return fs.EntryInfo{}, osError("stat", e.w.displayOf(e.path), err)
	}
	return entryInfo(&st), nil
}

func entryInfo(st *confine.Stat) fs.EntryInfo {
	info := fs.EntryInfo{Size: -1, ModTime: confine.ModTime(st)}
	if confine.IsRegular(st) {
		info.Size = st.Size
	}
	return info
}

// Open opens the entry, a regular file, for reading its bytes as stored.
// It resolves the entry's real name again from the root, refusing every
// symlink on the way, so it works from any goroutine for as long as the
// provider is open (then it fails with ErrClosed, as a call of the
// provider would); an entry that is no longer a regular file (a FIFO, or
// swapped for a symlink) is refused without blocking.
func (e *treeEntry) Open(ctx context.Context) (_ io.ReadCloser, err error) {
	display := e.w.displayOf(e.path)
	if err := e.w.calls.enter("read", display); err != nil {
		return nil, err
	}
	defer e.w.calls.done("read", display, &err)
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("read", err)
	}
	if e.typ != fs.TypeFile {
		return nil, fs.NotRegularFile("read", display)
	}
	file, err := e.w.openFile(e.w.nameOf(e.path))
	switch {
	case err == nil:
		return file, nil
	case errors.Is(err, syscall.ELOOP) || err == errNotRegular:
		return nil, fs.NotRegularFile("read", display)
	case isAbsent(err):
		return nil, fs.NotFound("read", display)
	}
	return nil, osError("read", display, e.w.root.refuse(err))
}

// errNotRegular is an entry opened for reading that turned out not to be a
// regular file.
var errNotRegular = errors.New("not a regular file")

// sizedFile reads an open regular file up to the size it had when opened,
// and says io.EOF with the last bytes: a small file read whole then costs
// no read that returns nothing. Bytes appended after the open are not
// read, as they would not be of a file mapped at its open.
type sizedFile struct {
	r    io.ReadCloser
	left int64
}

func (f *sizedFile) Close() error { return f.r.Close() }

func (f *sizedFile) Read(p []byte) (int, error) {
	if f.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.r.Read(p)
	if f.left -= int64(n); err == nil && f.left == 0 {
		err = io.EOF
	}
	return n, err
}
