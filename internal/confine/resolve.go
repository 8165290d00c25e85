package confine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxSymlinks matches Linux's MAXSYMLINKS.
const maxSymlinks = 40

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
// so resolution is linear in the path's length; on an unconfined root an
// lstat by absolute name. A symlink that leads out of the root is
// ErrEscape (an unconfined root has no outside: ".." stops at its top, as
// in the kernel).
func (r *Root) Resolve(ctx context.Context, rel string) (string, error) {
	var (
		resolved []string // the real components below the root so far
		rest     = rel    // what is left to resolve
		links    int
		steps    int
		// While a symlink met in rel itself is expanded: the state before
		// it, for the key of a missing file (that of the link, not of its
		// target), and rel's rest after it.
		expanding           bool
		savedResolved       []string
		savedName, origRest string
	)
	cur := r.res.top()
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
				return "", ErrEscape
			}
			continue
		}
		if stale {
			next, err := r.res.reopen(resolved)
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
func (r *Root) keyOf(names []string, rest string) string {
	rel := filepath.Join(strings.Join(names, string(filepath.Separator)), rest)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = "."
	}
	return r.Key(rel)
}

// linkTarget maps an absolute symlink target to a name relative to the
// root, when it stays inside (in either spelling of the root).
func (r *Root) linkTarget(target string) (string, bool) {
	if r.dir == nil {
		return strings.TrimPrefix(target, filepath.VolumeName(target)), true
	}
	rel, ok := r.Contains(target)
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

// pathResolver resolves by the name of each step from the top: through the
// root's os.Root, which refuses every name that leaves it, or by absolute
// names on an unconfined root. A step costs a lookup of its whole name, which
// the platform's path length bounds.
type pathResolver struct{ r *Root }

func (w pathResolver) close() error { return nil }

func (w pathResolver) top() lookupDir { return pathDir{r: w.r, dir: w.r.File("")} }

func (w pathResolver) reopen(names []string) (lookupDir, error) {
	return pathDir{r: w.r, dir: w.r.File(filepath.Join(names...))}, nil
}

// pathDir is a directory by its name for the root's operations ("" for
// the top of a confined root).
type pathDir struct {
	r   *Root
	dir string
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
	if err := c.r.Lstat(c.name(name), &st); err != nil {
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

func (c pathDir) readlink(name string) (string, error) {
	if c.r.dir == nil {
		return os.Readlink(c.name(name))
	}
	return c.r.dir.Readlink(c.name(name))
}

func (c pathDir) enter(name string) (lookupDir, error) {
	return pathDir{r: c.r, dir: c.name(name)}, nil
}
