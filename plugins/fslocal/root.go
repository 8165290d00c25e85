package fslocal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/gordis-run/gordis/plugins/fs"
)

// A root is one directory tree the provider may reach and the handle every
// operation under it goes through: names are relative to the handle, so no
// symlink, "..", or directory swapped for a symlink can lead an operation
// out of the tree. The host root (no handle) is the unconfined provider's:
// it reaches the whole filesystem by absolute names, as the process may.
type root struct {
	name      string   // the directory as configured, absolute and clean
	path      string   // its real path: every key under the root starts with it
	readOnly  bool     // list and read only
	workspace bool     // the provider's cwd (messages say "the workspace")
	dir       *os.Root // nil for the host root
	walk      walker   // the platform's handle for resolution
	// escape is the cause dir reports for a name that leaves it, however
	// deep in *os.PathError wrappers (MkdirAll wraps one in another).
	// Package os does not export it; openRoot provokes it with a name that
	// escapes lexically (no I/O is done for it).
	escape error
}

// openRoot opens the directory at name (absolute and clean) as a root.
func openRoot(name string, readOnly, workspace bool) (*root, error) {
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, err
	}
	dir, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	r := &root{name: name, path: real, readOnly: readOnly, workspace: workspace, dir: dir}
	if r.walk, err = openWalker(r); err != nil {
		dir.Close()
		return nil, err
	}
	var pe *os.PathError
	if _, err := dir.Lstat(".."); errors.As(err, &pe) {
		r.escape = pe.Err
	}
	return r, nil
}

func (r *root) close() error {
	err := r.walk.close()
	if r.dir != nil {
		err = errors.Join(r.dir.Close(), err)
	}
	return err
}

// isEscape reports a name refused because it leaves the root: by a
// symlink, or a directory replaced by one after the name was resolved.
func (r *root) isEscape(err error) bool {
	return errors.Is(err, errWalkEscape) || r.escape != nil && errors.Is(err, r.escape)
}

// refusal is an operation a root refused: its name leaves the root, or it
// writes under a read-only root. osError turns it into FS_SANDBOX_DENIED.
type refusal struct {
	root *root
	err  error
}

func (e *refusal) Error() string { return e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }

// refuse marks err as the root's refusal when it says a name left the root.
func (r *root) refuse(err error) error {
	if err != nil && r.isEscape(err) {
		return &refusal{r, err}
	}
	return err
}

// contains reports whether the absolute clean path is the root or under it,
// in either spelling (as configured or real), and returns the rest relative
// to the root ("." for the root itself).
func (r *root) contains(path string) (string, bool) {
	for _, prefix := range [...]string{r.path, r.name} {
		if foldCase && len(path) >= len(prefix) && strings.EqualFold(path[:len(prefix)], prefix) {
			path = prefix + path[len(prefix):]
		}
		if rel, ok := under(path, prefix); ok {
			return rel, true
		}
	}
	return "", false
}

// foldCase says the platform's paths name one file whatever their case, so
// a root is recognised in any spelling.
const foldCase = runtime.GOOS == "windows"

// under returns path relative to dir when path is dir or below it.
func under(path, dir string) (string, bool) {
	if path == dir {
		return ".", true
	}
	if !strings.HasPrefix(path, dir) {
		return "", false
	}
	rest := path[len(dir):]
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return rest, rest != ""
	}
	if !os.IsPathSeparator(rest[0]) {
		return "", false
	}
	return rest[1:], true
}

// file is the name of key for this root's operations: relative to the
// handle, or the absolute key itself on the host root.
func (r *root) file(rel string) string {
	if r.dir == nil {
		return r.key(rel)
	}
	return rel
}

// key is the identity of the file at rel, a real name below the root.
func (r *root) key(rel string) string {
	if rel == "." || rel == "" {
		return r.path
	}
	return joinKey(r.path, rel)
}

// denied is the refusal of a path outside every root, or led out of the
// root r by a symlink, or (write) under a read-only root. One form names
// the path and the root:
//
//	cannot read "/etc/hostname": outside the workspace "/tmp/ws"
//	cannot write "/srv/docs/a.md": the root "/srv/docs" is read-only
func (r *root) denied(verb, path string, cause error) *fs.Error {
	noun := "the root"
	if r.workspace {
		noun = "the workspace"
	}
	reason := `outside ` + noun + ` "` + r.name + `"`
	if cause == errReadOnly {
		reason = noun + ` "` + r.name + `" is read-only`
	}
	return &fs.Error{Code: fs.CodeSandboxDenied, Message: "cannot " + verb + ` "` + path + `": ` + reason, Err: cause}
}

var (
	errReadOnly   = errors.New("read-only root")
	errWalkEscape = errors.New("path leaves the root")
)

// ---- operations by name (relative to the handle, absolute on the host) ------

func (r *root) stat(name string, st *fileStat) error {
	if r.dir == nil {
		return statPath(name, st)
	}
	if err := r.statBeneath(name, st); err == nil || !r.isEscape(err) {
		return err
	}
	return r.statDangling(name, st)
}

// statDangling stats name once the kernel or os.Root refused to stat or
// open it as an escape. Both refuse every absolute symlink, even one whose
// target is inside the root, so a dangling link with such a target would
// be refused where a relative one is missing. Resolution tells them apart:
// a name that resolves to itself and is a symlink dangles, and is missing;
// any other name stays refused.
func (r *root) statDangling(name string, st *fileStat) error {
	refused := &refusal{r, errWalkEscape}
	key, err := r.realKey(context.Background(), name)
	if err != nil {
		return r.refuse(err)
	}
	if rel, _ := under(key, r.path); rel != filepath.Clean(name) {
		return refused
	}
	if err := r.lstat(name, st); err != nil || !isSymlink(st) {
		return refused
	}
	return &os.PathError{Op: "stat", Path: name, Err: syscall.ENOENT}
}

// statRoot is statBeneath by os.Root: a walk in user space.
func (r *root) statRoot(name string, st *fileStat) error {
	fi, err := r.dir.Stat(name)
	if err != nil {
		return err
	}
	fillStat(fi, st)
	return nil
}

func (r *root) lstat(name string, st *fileStat) error {
	if r.dir == nil {
		return lstatPath(name, st)
	}
	fi, err := r.dir.Lstat(name)
	if err != nil {
		return r.refuse(err)
	}
	fillStat(fi, st)
	return nil
}

func (r *root) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	if r.dir == nil {
		return os.OpenFile(name, flag, perm)
	}
	file, err := r.openBeneath(name, flag, perm)
	if err != nil && r.isEscape(err) {
		var st fileStat
		return nil, r.statDangling(name, &st)
	}
	return file, err
}

func (r *root) mkdirAll(name string) error {
	if r.dir == nil {
		return os.MkdirAll(name, 0o777)
	}
	return r.refuse(r.dir.MkdirAll(name, 0o777))
}

func (r *root) mkdir(name string, perm os.FileMode) error {
	if r.dir == nil {
		return os.Mkdir(name, perm)
	}
	return r.refuse(r.dir.Mkdir(name, perm))
}

func (r *root) chmod(name string, mode os.FileMode) error {
	if r.dir == nil {
		return os.Chmod(name, mode)
	}
	return r.refuse(r.dir.Chmod(name, mode))
}

func (r *root) rename(from, to string) error {
	if r.dir == nil {
		return os.Rename(from, to)
	}
	return r.refuse(r.dir.Rename(from, to))
}

func (r *root) removeAll(name string) error {
	if r.dir == nil {
		return os.RemoveAll(name)
	}
	return r.refuse(r.dir.RemoveAll(name))
}

// syncDir makes a rename in the directory durable. Windows cannot flush a
// directory handle; its renames are journaled by NTFS instead.
func (r *root) syncDir(name string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := r.open(name, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ---- resolution ---------------------------------------------------------------

// maxSymlinks matches Linux's MAXSYMLINKS.
const maxSymlinks = 40

// ctxEvery is how many path components resolution walks between two looks
// at its context: often enough to stop a huge path at its deadline, rarely
// enough to cost nothing on ordinary ones.
const ctxEvery = 32

// realKey returns the key of rel (a clean name relative to the root): its
// real path, every symlink followed inside the root, like realpath(3). When
// it does not exist, the key is the real path of its nearest existing
// ancestor joined with the missing rest, so a file's key is the same before
// and after it is created; a dangling symlink is "missing", its key the link
// itself. Each component costs one lookup: on a confined root an lstat
// (and an open when it is a directory) relative to a handle on its parent,
// so the walk is linear in the path's length; on the host root an lstat by
// absolute name. A symlink that leads out of the root is errWalkEscape (the
// host root has no outside: ".." stops at its top, as in the kernel).
func (r *root) realKey(ctx context.Context, rel string) (string, error) {
	var (
		resolved []string // the real components below the root so far
		rest     = rel    // what is left to walk
		links    int
		steps    int
		// While a symlink met in rel itself is expanded: the state before
		// it, for the key of a missing file (that of the link, not of its
		// target), and rel's rest after it.
		expanding           bool
		savedResolved       []string
		savedName, origRest string
	)
	cur := r.walk.top()
	defer func() { cur.close() }()
	stale := false // cur is not the directory of resolved (".." went up)
	for {
		rest = strings.TrimLeft(rest, separators)
		if rest == "" {
			break
		}
		inLink := expanding && len(rest) > len(origRest)
		expanding = inLink
		var name string
		name, rest = cutName(rest)
		if steps++; steps%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		switch name {
		case ".":
			continue
		case "..":
			if len(resolved) > 0 {
				resolved = resolved[:len(resolved)-1]
				stale = true
			} else if r.dir != nil {
				return "", errWalkEscape
			}
			continue
		}
		if stale {
			next, err := r.walk.reopen(resolved)
			if err != nil {
				return "", err
			}
			cur.close()
			cur, stale = next, false
		}
		kind, err := cur.kind(name)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
			if inLink {
				return r.keyOf(append(savedResolved, savedName), origRest), nil
			}
			return r.keyOf(append(resolved, name), rest), nil
		}
		more := strings.TrimLeft(rest, separators) != ""
		switch kind {
		case kindLink:
			if links++; links > maxSymlinks {
				return "", &os.PathError{Op: "resolve", Path: rel, Err: syscall.ELOOP}
			}
			target, err := cur.readlink(name)
			if err != nil {
				return "", err
			}
			if !inLink {
				expanding, savedResolved, savedName, origRest = true, slices.Clone(resolved), name, rest
			}
			if filepath.IsAbs(target) {
				inside, ok := r.linkTarget(filepath.Clean(target))
				if !ok {
					return "", errWalkEscape
				}
				resolved, stale, target = resolved[:0], true, inside
			}
			rest = target + string(filepath.Separator) + rest
		case kindDir:
			resolved = append(resolved, name)
			if more {
				next, err := cur.enter(name)
				if err != nil {
					return "", err
				}
				cur.close()
				cur = next
			}
		default:
			resolved = append(resolved, name)
			if more {
				return "", &os.PathError{Op: "resolve", Path: rel, Err: syscall.ENOTDIR}
			}
		}
	}
	return r.keyOf(resolved, ""), nil
}

// separators are the bytes that separate path components: "/" everywhere,
// and "\" on Windows too.
const separators = "/" + string(filepath.Separator)

// cutName splits the first component off a path that does not start with
// a separator.
func cutName(path string) (name, rest string) {
	i := strings.IndexAny(path, separators)
	if i < 0 {
		return path, ""
	}
	return path[:i], path[i+1:]
}

// keyOf joins the real components and a missing rest into a key; a rest
// whose ".." climbs above the root is cut at the root.
func (r *root) keyOf(names []string, rest string) string {
	rel := filepath.Join(strings.Join(names, string(filepath.Separator)), rest)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = "."
	}
	return r.key(rel)
}

// linkTarget maps an absolute symlink target to a name relative to the
// root, when it stays inside (in either spelling of the root).
func (r *root) linkTarget(target string) (string, bool) {
	if r.dir == nil {
		return strings.TrimPrefix(target, filepath.VolumeName(target)), true
	}
	rel, ok := r.contains(target)
	if rel == "." {
		rel = ""
	}
	return rel, ok
}

// kind is what resolution needs to know of a name: follow it, enter it, or
// stop at it.
type kind uint8

const (
	kindOther kind = iota
	kindDir
	kindLink
)
