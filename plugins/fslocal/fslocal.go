// Package fslocal is the host filesystem provider: it implements the fs seam
// (fs.FileSystem and fs.TextSeeker) on the local filesystem (Linux, macOS,
// Windows).
//
// The core, [Open] (confined) or [NewUnconfined], needs no runtime;
// [Plugin] provides it as the "fs" service. Paths are displayed lexically
// (the spelling the caller used, made absolute and cleaned) and identified
// by their realpath ([fs.Target.Key]), so every alias of a file shares one
// version, one lock and one observation. All I/O goes through the key; a
// confined provider names it relative to a handle on the root that holds
// it, so nothing it does can leave its roots. See docs/filesystem.md for the
// full contract.
package fslocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

// FS is the local provider. It is safe for concurrent use; mutations of one
// file (by key) are serialised in arrival order, reads take no lock.
type FS struct {
	cwd string
	// roots are the trees a confined provider reaches, the deepest first
	// (a read-only root inside the workspace wins); nil when unconfined.
	roots     []*root
	workspace *root   // the root at cwd, named in refusals
	readOnly  []*root // the read-only roots, which no write may stage in
	locks     keyedMutex
	calls     callGate // the calls being served, which Close waits for
}

var (
	_ fs.FileSystem = (*FS)(nil)
	_ fs.TextSeeker = (*FS)(nil)
)

// NewUnconfined returns a provider that resolves relative paths against
// cwd and confines nothing: absolute paths, ".." and symlinks reach
// anywhere the process may, so cwd is a default, not a boundary. An empty
// cwd means the process working directory at the time of the call. [Open]
// is the confined constructor.
func NewUnconfined(cwd string) *FS {
	return &FS{cwd: absDir(cwd)}
}

func absDir(dir string) string {
	if wd, err := os.Getwd(); err == nil {
		if dir == "" {
			dir = wd
		} else if !filepath.IsAbs(dir) {
			dir = filepath.Join(wd, dir)
		}
	}
	return filepath.Clean(dir)
}

// Open returns the provider cfg describes: confined to cfg.Cwd and
// cfg.Roots unless cfg.Unconfined. Every name a confined provider touches
// is resolved relative to a handle on one of those directories, opened
// here; a path that leaves them is refused with FS_SANDBOX_DENIED. Close
// releases the handles.
func Open(cfg Config) (*FS, error) {
	f := NewUnconfined(cfg.Cwd)
	if cfg.Unconfined {
		return f, nil
	}
	ws, err := openRoot(f.cwd, false, true)
	if err != nil {
		return nil, fmt.Errorf("fslocal: workspace: %w", err)
	}
	f.workspace, f.roots = ws, []*root{ws}
	for _, extra := range cfg.Roots {
		dir := extra.Path
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(f.cwd, dir)
		}
		r, err := openRoot(filepath.Clean(dir), extra.ReadOnly, false)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("fslocal: root: %w", err)
		}
		f.roots = append(f.roots, r)
		if r.readOnly {
			f.readOnly = append(f.readOnly, r)
		}
	}
	slices.SortStableFunc(f.roots, func(a, b *root) int { return len(b.dir.Path()) - len(a.dir.Path()) })
	return f, nil
}

// Close refuses the calls to come, waits for the calls the provider is
// serving (at most closeWait), then releases the roots' handles. A call that
// arrives once Close began fails with [ErrClosed] and changes nothing; so
// does one still running when the wait ends, unless its change had landed,
// which it then reports. Calls still running then are Close's error, for
// the plugin's teardown to log.
func (f *FS) Close() error {
	var errs []error
	if n := f.calls.close(closeWait); n > 0 {
		errs = append(errs, fmt.Errorf("fslocal: closed with %d calls still running after %v", n, closeWait))
	}
	for _, r := range f.roots {
		errs = append(errs, r.close())
	}
	return errors.Join(errs...)
}

// Cwd is the default directory relative paths resolve against.
func (f *FS) Cwd() string { return f.cwd }

// Resolve returns the display path and the identity key of path, relative to
// cwd (or the provider's cwd when cwd is ""). The file need not exist. A
// confined provider refuses a path outside its roots, or led out of its
// root by a symlink (FS_SANDBOX_DENIED).
func (f *FS) Resolve(ctx context.Context, path, cwd string) (_ fs.Target, err error) {
	display := f.displayPath(path, cwd)
	if err := f.calls.enter("resolve", display); err != nil {
		return fs.Target{}, err
	}
	defer f.calls.done("resolve", display, &err)
	if err := ctx.Err(); err != nil {
		return fs.Target{}, fs.Aborted("resolve", err)
	}
	t, _, err := f.resolve(ctx, "resolve", path, display)
	if err != nil {
		return fs.Target{}, err
	}
	if err := ctx.Err(); err != nil {
		return fs.Target{}, fs.Aborted("resolve", err)
	}
	return t, nil
}

// resolve is Resolve for the operation verb, which names it in errors, of
// path, whose display path is display (see displayPath); it also returns
// the root the path resolved in and the path's name below it.
func (f *FS) resolve(ctx context.Context, verb, path, display string) (fs.Target, placement, error) {
	if fs.Blank(path) {
		return fs.Target{}, placement{}, fs.Errorf(fs.CodeNotFound, "file_path must be a non-empty string")
	}
	if strings.IndexByte(display, 0) >= 0 {
		return fs.Target{}, placement{}, &fs.Error{Code: fs.CodeIO, Err: syscall.EINVAL,
			Message: `cannot ` + verb + ` "` + fs.Clip(strings.ReplaceAll(display, "\x00", `\x00`)) + `": path contains a NUL byte`}
	}
	r, rel, err := f.rootOf(display)
	if err != nil {
		return fs.Target{}, placement{}, osError(verb, display, err)
	}
	key, err := r.dir.Resolve(ctx, rel)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return fs.Target{}, placement{}, fs.Aborted(verb, ctx.Err())
		case errors.Is(err, syscall.ENOTDIR):
			return fs.Target{}, placement{}, &fs.Error{Code: fs.CodeNotFound, Err: err,
				Message: `cannot ` + verb + ` "` + fs.Clip(display) + `": a parent path segment is not a directory`}
		}
		return fs.Target{}, placement{}, osError(verb, display, r.refuse(err))
	}
	return fs.Target{Key: key, Path: display}, placement{r, rel}, nil
}

// placement is where a path resolved: its root, and its clean name there.
type placement struct {
	root *root
	rel  string
}

// rootOf returns the root whose tree lexically holds the absolute, clean
// display path (the deepest), and the path relative to it. Outside every
// root is a refusal naming the workspace.
func (f *FS) rootOf(display string) (*root, string, error) {
	if f.roots == nil {
		r, rel := hostRootOf(display)
		return r, rel, nil
	}
	best, bestRel := (*root)(nil), ""
	for _, r := range f.roots {
		if rel, ok := r.dir.Contains(display); ok && (best == nil || len(r.dir.Name()) > len(best.dir.Name())) {
			best, bestRel = r, rel
		}
	}
	if best == nil {
		return nil, "", &refusal{f.workspace, confine.ErrEscape}
	}
	return best, bestRel, nil
}

// locate returns the root that holds the key of t and the key's name for
// that root's operations; write asks for a root that allows writing.
func (f *FS) locate(t fs.Target, write bool) (*root, string, error) {
	if f.roots == nil {
		r, _ := hostRootOf(t.Key)
		return r, t.Key, nil
	}
	for _, r := range f.roots {
		if rel, ok := r.dir.Rel(t.Key); ok {
			if write && r.readOnly {
				return nil, "", &refusal{r, errReadOnly}
			}
			return r, r.dir.File(rel), nil
		}
	}
	owner, _, err := f.rootOf(t.Path)
	if err != nil {
		return nil, "", err
	}
	return nil, "", &refusal{owner, confine.ErrEscape}
}

// displayPath is the lexical absolute spelling of path: symlinks are kept,
// ".", ".." and repeated or trailing separators are collapsed.
func (f *FS) displayPath(path, cwd string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	switch {
	case cwd == "":
		cwd = f.cwd
	case !filepath.IsAbs(cwd):
		cwd = filepath.Join(f.cwd, cwd)
	}
	return filepath.Join(cwd, path)
}

// stat stats the file at t, through its root.
func (f *FS) stat(t fs.Target, st *confine.Stat) error {
	r, name, err := f.locate(t, false)
	if err != nil {
		return err
	}
	return r.stat(name, st)
}

// Stat follows symlinks; it returns (nil, nil) when the target is absent or
// an ancestor is not a directory.
func (f *FS) Stat(ctx context.Context, t fs.Target) (_ *fs.Info, err error) {
	if err := f.calls.enter("stat", t.Path); err != nil {
		return nil, err
	}
	defer f.calls.done("stat", t.Path, &err)
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("stat", err)
	}
	var st confine.Stat
	err = f.stat(t, &st)
	if cerr := ctx.Err(); cerr != nil {
		return nil, fs.Aborted("stat", cerr)
	}
	if err != nil {
		if isAbsent(err) {
			return nil, nil
		}
		return nil, osError("stat", t.Path, err)
	}
	return infoOf(&st), nil
}

// Lstat reports path itself, not what a final symlink points to; nil when
// absent. The returned Target is what Resolve returns for path.
func (f *FS) Lstat(ctx context.Context, path, cwd string) (_ *fs.PathInfo, err error) {
	display := f.displayPath(path, cwd)
	if err := f.calls.enter("lstat", display); err != nil {
		return nil, err
	}
	defer f.calls.done("lstat", display, &err)
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("lstat", err)
	}
	t, at, err := f.resolve(ctx, "lstat", path, display)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, nil // an ancestor is a file: absent, as for Stat
		}
		return nil, err
	}
	var st confine.Stat
	err = at.lstat(ctx, &st)
	if cerr := ctx.Err(); cerr != nil {
		return nil, fs.Aborted("lstat", cerr)
	}
	if err != nil {
		if isAbsent(err) {
			return nil, nil
		}
		return nil, osError("lstat", t.Path, err)
	}
	info := infoOf(&st)
	if confine.IsSymlink(&st) {
		info.Type, info.Size = fs.TypeSymlink, -1
	}
	return &fs.PathInfo{Target: t, Info: *info}, nil
}

// lstat stats the name itself, a final symlink not followed: the real
// directory it is in, then its last component.
func (at placement) lstat(ctx context.Context, st *confine.Stat) error {
	r := at.root
	if at.rel == "." {
		return r.lstat(r.dir.File("."), st)
	}
	dir, err := r.dir.Resolve(ctx, filepath.Dir(at.rel))
	if err != nil {
		return r.refuse(err)
	}
	rel, _ := r.dir.Rel(confine.Join(dir, filepath.Base(at.rel)))
	return r.lstat(r.dir.File(rel), st)
}

// typeOf is the seam's type of what st describes.
func typeOf(st *confine.Stat) fs.Type {
	switch {
	case confine.IsRegular(st):
		return fs.TypeFile
	case confine.IsDir(st):
		return fs.TypeDirectory
	}
	return fs.TypeOther
}

func infoOf(st *confine.Stat) *fs.Info {
	info := &fs.Info{Version: versionOf(st), Type: typeOf(st), Size: -1}
	if info.Type == fs.TypeFile {
		info.Size = st.Size
	}
	return info
}

// pathChanged is the reason given for a path that kept changing under the
// call (see osError).
const pathChanged = "a directory on the path was replaced during the call; retry"

// isAbsent reports the errors that mean "nothing there".
func isAbsent(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// osError maps an OS failure to the seam's vocabulary: a refusal by a root
// is FS_SANDBOX_DENIED (see root.denied), EACCES and EPERM are
// FS_PERMISSION_DENIED, anything else FS_IO_ERROR, the last two as
// `cannot <verb> "<path>": <reason>` with the cause kept in Err. A path
// that kept changing under the call (confine.ErrChanged) says so, and that
// the call may be retried: its errno (ENOTDIR, ELOOP, EINVAL) would
// describe a directory that is there again.
func osError(verb, path string, err error) *fs.Error {
	var refused *refusal
	if errors.As(err, &refused) {
		return refused.root.denied(verb, path, refused.err)
	}
	code := fs.CodeIO
	var errno syscall.Errno
	reason := "input/output error"
	switch {
	case errors.Is(err, confine.ErrChanged):
		reason = pathChanged
	case errors.As(err, &errno):
		reason = errno.Error()
	}
	if errors.Is(err, os.ErrPermission) {
		code = fs.CodePermission
	}
	return &fs.Error{Code: code, Message: "cannot " + verb + ` "` + fs.Clip(path) + `": ` + reason, Err: err}
}
