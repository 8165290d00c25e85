package confine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

// tree is where resolution runs: a Root's directory, or the host's
// filesystem below a volume's top (a Host).
type tree struct {
	name     string   // the directory as opened, absolute and clean
	path     string   // its real path: every key under it starts with it
	res      resolver // the platform's handle for resolution
	confined bool     // a Root: nothing may lead out of it
}

// Name is the directory as opened (a Host's top).
func (t *tree) Name() string { return t.name }

// Path is the directory's real path, which every key below it starts with.
func (t *tree) Path() string { return t.path }

// Contains reports whether the absolute clean path is the tree's top or under it,
// in either spelling (as opened or real), and returns the rest relative
// to it ("." for the root itself).
func (t *tree) Contains(path string) (string, bool) {
	for _, prefix := range [...]string{t.path, t.name} {
		if foldCase && len(path) >= len(prefix) && strings.EqualFold(path[:len(prefix)], prefix) {
			path = prefix + path[len(prefix):]
		}
		if rel, ok := under(path, prefix); ok {
			return rel, true
		}
	}
	return "", false
}

// Rel returns key relative to the top when key is the root's real path or
// below it.
func (t *tree) Rel(key string) (string, bool) { return under(key, t.path) }

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

// Key is the identity of the file at rel, a real name below the top.
func (t *tree) Key(rel string) string {
	if rel == "." || rel == "" {
		return t.path
	}
	return Join(t.path, rel)
}

// Join appends one name to a clean absolute directory path.
func Join(dir, name string) string {
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// file is the name of rel for the tree's lookups: relative to a Root's
// handle, absolute on a Host.
func (t *tree) file(rel string) string {
	if t.confined {
		return rel
	}
	return t.Key(rel)
}

// maxSymlinks matches Linux's MAXSYMLINKS.
const maxSymlinks = 40

// maxRaces bounds the retries of a lookup that renames keep racing.
const maxRaces = 16

// ErrChanged is the cause of a name that kept changing while it was looked
// up: a directory on its path replaced by a symlink or a file, again and
// again (another process renaming), or gone, between the look at it and
// its use. It says nothing about the name itself: the call may be retried.
var ErrChanged = errors.New("path changed during the call")

// relook judges a readlink or an open of a name that failed although its
// lstat said it would not: nil when the failure says the entry was replaced
// or removed in between (the name is then looked up again), else the error
// to return, ErrChanged once the races counted in races reach maxRaces.
func relook(err error, rel string, races *int) error {
	if !replaced(err) {
		return err
	}
	if *races++; *races > maxRaces {
		return &os.PathError{Op: "resolve", Path: rel, Err: ErrChanged}
	}
	return nil
}

// replaced reports the failures of a readlink or an open of a name whose
// kind was known (a symlink, a directory) that say it no longer has it.
func replaced(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) ||
		errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EINVAL)
}

// ctxEvery is how many path components resolution takes between two looks
// at its context: often enough to stop a huge path at its deadline, rarely
// enough to cost nothing on ordinary ones.
const ctxEvery = 32

// Resolve returns the key of rel (a clean name relative to the root): its
// real path, every symlink followed inside the root, like realpath(3). When
// it does not exist, the key is the real path of its nearest existing
// ancestor joined with the missing rest, so a file's key is the same before
// and after it is created; a dangling symlink is "missing", its key the link
// itself. Each component costs one lookup: on a confined root an lstat
// (and an open when it is a directory) relative to a handle on its parent,
// so resolution is linear in the path's length; on a Host an lstat by
// absolute name. A symlink that leads out of the root is
// ErrEscape (a Host has no outside: ".." stops at its top, as in the
// kernel). A name replaced between its lstat and its readlink or open (a
// directory swapped for a symlink) is looked up again; one that keeps
// changing is ErrChanged.
func (t *tree) Resolve(ctx context.Context, rel string) (string, error) {
	var (
		resolved []string // the real components below the root so far
		rest     = rel    // what is left to resolve
		links    int
		steps    int
		races    int
		// While a symlink met in rel itself is expanded: the state before
		// it, for the key of a missing file (that of the link, not of its
		// target), and rel's rest after it.
		expanding           bool
		savedResolved       []string
		savedName, origRest string
	)
	cur := t.res.top()
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
			} else if t.confined {
				return "", ErrEscape
			}
			continue
		}
		if stale {
			next, err := t.res.reopen(resolved)
			if err != nil {
				if replaced(err) { // a real name below the root no longer is
					err = &os.PathError{Op: "resolve", Path: rel, Err: ErrChanged}
				}
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
				return t.keyOf(append(savedResolved, savedName), origRest), nil
			}
			return t.keyOf(append(resolved, name), rest), nil
		}
		more := strings.TrimLeft(rest, separators) != ""
		switch kind {
		case kindLink:
			target, err := cur.readlink(name)
			if err != nil {
				if err := relook(err, rel, &races); err != nil {
					return "", err
				}
				rest = name + string(filepath.Separator) + rest
				continue
			}
			if links++; links > maxSymlinks {
				return "", &os.PathError{Op: "resolve", Path: rel, Err: syscall.ELOOP}
			}
			if !inLink {
				expanding, savedResolved, savedName, origRest = true, slices.Clone(resolved), name, rest
			}
			if filepath.IsAbs(target) {
				inside, ok := t.linkTarget(filepath.Clean(target))
				if !ok {
					return "", ErrEscape
				}
				resolved, stale, target = resolved[:0], true, inside
			}
			rest = target + string(filepath.Separator) + rest
		case kindDir:
			resolved = append(resolved, name)
			if more {
				next, err := cur.enter(name)
				if err != nil {
					if err := relook(err, rel, &races); err != nil {
						return "", err
					}
					resolved = resolved[:len(resolved)-1]
					rest = name + string(filepath.Separator) + rest
					continue
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
	return t.keyOf(resolved, ""), nil
}

// separators are the bytes that separate path components: "/" everywhere,
// and "\" on Windows too.
var separators = "/" + strings.TrimPrefix(string(filepath.Separator), "/")

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
func (t *tree) keyOf(names []string, rest string) string {
	rel := filepath.Join(strings.Join(names, string(filepath.Separator)), rest)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = "."
	}
	return t.Key(rel)
}

// linkTarget maps an absolute symlink target to a name relative to the
// root, when it stays inside (in either spelling of the root).
func (t *tree) linkTarget(target string) (string, bool) {
	if !t.confined {
		return strings.TrimPrefix(target, filepath.VolumeName(target)), true
	}
	rel, ok := t.Contains(target)
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

// resolver starts the resolutions below one root.
type resolver interface {
	// top is the root directory itself.
	top() lookupDir
	// reopen reaches the directory of real names below the root again.
	reopen(names []string) (lookupDir, error)
	close() error
}

// lookupDir is a directory a resolution has reached, where it looks up
// the next name.
type lookupDir interface {
	kind(name string) (kind, error)
	readlink(name string) (string, error)
	// enter reaches the child directory name.
	enter(name string) (lookupDir, error)
	close()
}

// pathResolver resolves by the name of each step from the top: through a
// Root's os.Root, which refuses every name that leaves it, or by absolute
// names on a Host. A step costs a lookup of its whole name, which the
// platform's path length bounds.
type pathResolver struct {
	t    *tree
	look looker
}

// looker looks names up for a pathResolver: through a Root's os.Root, or
// by absolute name when root is nil (a Host). It is not an interface, so
// the Stat of every step stays on the stack.
type looker struct{ root *os.Root }

func (l looker) lstat(name string, st *Stat) error {
	if l.root == nil {
		return lstatPath(name, st)
	}
	fi, err := l.root.Lstat(name)
	if err != nil {
		return err
	}
	fillStat(fi, st)
	return nil
}

func (l looker) readlink(name string) (string, error) {
	if l.root == nil {
		return os.Readlink(name)
	}
	return l.root.Readlink(name)
}

func (w pathResolver) close() error { return nil }

func (w pathResolver) top() lookupDir { return pathDir{w.look, w.t.file("")} }

func (w pathResolver) reopen(names []string) (lookupDir, error) {
	return pathDir{w.look, w.t.file(filepath.Join(names...))}, nil
}

// pathDir is a directory by its name for the lookups ("" for the top of a
// Root).
type pathDir struct {
	look looker
	dir  string
}

func (c pathDir) close() {}

func (c pathDir) name(child string) string {
	if c.dir == "" {
		return child
	}
	return Join(c.dir, child)
}

func (c pathDir) kind(name string) (kind, error) {
	var st Stat
	if err := c.look.lstat(c.name(name), &st); err != nil {
		return kindOther, err
	}
	switch {
	case IsSymlink(&st):
		return kindLink, nil
	case IsDir(&st):
		return kindDir, nil
	}
	return kindOther, nil
}

func (c pathDir) readlink(name string) (string, error) { return c.look.readlink(c.name(name)) }

func (c pathDir) enter(name string) (lookupDir, error) { return pathDir{c.look, c.name(name)}, nil }
