package toolsearch

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolsearch/internal/ignore"
	"github.com/gordis-run/gordis/registry"
)

// grep searches the files below the root that ripgrep's default filters
// admit (or the include selects) for lines the pattern matches. rg checks
// the include glob, then the regex, then the root, and so does grep.
func (t *toolset) grep(ctx context.Context, call *registry.Call, args grepArgs) (*GrepResult, error) {
	req, err := args.parse()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.timeout())
	defer cancel()
	var include *ignore.Override
	if req.include != "" {
		if include, err = ignore.NewOverride(req.include); err != nil {
			return nil, patternRejected("grep", err)
		}
	}
	m, err := compile(req.pattern)
	if err != nil {
		return nil, err
	}
	s, err := t.resolve(ctx, call, "grep", req.path)
	if err != nil {
		return nil, err
	}
	return newSearch(ctx, s, m, include, t.cfg.RawOutputMaxBytes).run()
}

// filter is the walk's side of a search: which entries it descends or
// searches, by the ignore files of every directory on the way down.
//
// A directory's ignore files are among its own entries, and the walk
// visits names in byte order: once it reaches a name after ".rgignore" it
// has passed .git, .gitignore, .ignore and .rgignore, and knows which
// exist without looking them up. Files before that point wait for the
// directory's rules; a subdirectory before it (a hidden one, say) cannot
// wait, so the names still ahead are looked up then. Most directories
// cost no lookup at all.
type filter struct {
	ctx     context.Context
	s       *scope
	include *ignore.Override
	search  func(e fs.WalkEntry, sub string) error // queues a file, in walk order
	// stack holds the directories the walk is inside, the root's first.
	stack []*dirState
}

// ignoreNames are the entries that make a directory's rules, in byte
// order: the repository marker, then the ignore files, weakest first.
var ignoreNames = [...]string{".git", ".gitignore", ".ignore", ".rgignore"}

// dirState is a directory the walk is inside.
type dirState struct {
	sub    string        // below the root
	path   string        // below the workspace: its ignore files anchor here
	parent *ignore.Level // the rules above it
	level  *ignore.Level // its rules; nil until they are known
	found  [len(ignoreNames)]fs.WalkEntry
	// waiting are its files visited before its rules were known.
	waiting []waitingFile
}

type waitingFile struct {
	entry fs.WalkEntry
	sub   string
}

// enterRoot builds the rules of a directory root: the ignore files of the
// workspace and of every directory down to the root apply below it.
func (f *filter) enterRoot() error {
	lvl := ignore.Root()
	dirs := []string{""}
	if rel := f.s.rel; rel != "" && !strings.HasPrefix(rel, "../") {
		for i := range len(rel) {
			if rel[i] == '/' {
				dirs = append(dirs, rel[:i])
			}
		}
		dirs = append(dirs, rel)
	} else if rel != "" {
		dirs = []string{rel} // a root outside the workspace has only its own
	}
	for _, d := range dirs {
		abs := f.s.ws
		if d != "" {
			abs = f.s.ws + "/" + d
		}
		var none [len(ignoreNames)]fs.WalkEntry
		files, err := f.rules(abs, &none, ".") // every ignore name sorts after "."
		if err != nil {
			return err
		}
		lvl = lvl.Child(d, files)
	}
	f.stack = append(f.stack[:0], &dirState{level: lvl})
	return nil
}

// visit decides on the entry sub below the root: a directory is descended
// or skipped (fs.SkipDir), a file is searched, now or once its
// directory's rules are known.
func (f *filter) visit(e fs.WalkEntry, sub string, typ fs.Type) error {
	d, err := f.parentOf(sub)
	if err != nil {
		return err
	}
	if d.level == nil {
		name := sub[strings.LastIndexByte(sub, '/')+1:]
		if i := slices.Index(ignoreNames[:], name); i >= 0 {
			d.found[i] = e
		}
		switch {
		case name <= ignoreNames[len(ignoreNames)-1] && typ == fs.TypeFile:
			d.waiting = append(d.waiting, waitingFile{e, sub})
			return nil
		case name <= ignoreNames[len(ignoreNames)-1] && typ != fs.TypeDirectory:
			return nil // never searched: nothing to decide yet
		}
		if err := f.settle(d, name); err != nil {
			return err
		}
	}
	path := f.s.match(sub)
	switch {
	case typ == fs.TypeDirectory:
		if d.level.Ignored(f.include, path, true) {
			return fs.SkipDir
		}
		f.stack = append(f.stack, &dirState{sub: sub, path: path, parent: d.level})
	case typ == fs.TypeFile && !d.level.Ignored(f.include, path, false):
		return f.search(e, sub)
	}
	return nil
}

// parentOf returns the directory holding sub, leaving the directories the
// walk has left.
func (f *filter) parentOf(sub string) (*dirState, error) {
	for len(f.stack) > 1 {
		d := f.stack[len(f.stack)-1]
		if strings.HasPrefix(sub, d.sub) && len(sub) > len(d.sub) && sub[len(d.sub)] == '/' {
			break
		}
		if err := f.leave(d); err != nil {
			return nil, err
		}
		f.stack = f.stack[:len(f.stack)-1]
	}
	return f.stack[len(f.stack)-1], nil
}

// finish leaves the directories still open when the walk ends.
func (f *filter) finish() error {
	for i := len(f.stack) - 1; i > 0; i-- {
		if err := f.leave(f.stack[i]); err != nil {
			return err
		}
	}
	return nil
}

// leave settles a directory whose entries have all been visited.
func (f *filter) leave(d *dirState) error {
	if d.level != nil {
		return nil
	}
	return f.settle(d, "")
}

// settle makes d's rules from the ignore entries it has seen, looking up
// the names still ahead of next (the entry being visited; "" once every
// entry has been), and searches the files that waited for them.
func (f *filter) settle(d *dirState, next string) error {
	abs := join(f.s.root.Path, d.sub)
	files, err := f.rules(abs, &d.found, next)
	if err != nil {
		return err
	}
	d.level = d.parent.Child(d.path, files)
	for _, w := range d.waiting {
		if !d.level.Ignored(f.include, f.s.match(w.sub), false) {
			if err := f.search(w.entry, w.sub); err != nil {
				return err
			}
		}
	}
	d.waiting = nil
	return nil
}

// rules reads the ignore files of the directory abs (a display path):
// those among found from their entries, the names after next that were
// not found by looking them up. A .git directory's info/exclude is read
// too. An absent or unreadable file is none.
func (f *filter) rules(abs string, found *[len(ignoreNames)]fs.WalkEntry, next string) (ignore.Files, error) {
	var (
		files ignore.Files
		git   fs.Type
	)
	dst := [len(ignoreNames)]*[]byte{nil, &files.GitIgnore, &files.Ignore, &files.RgIgnore}
	for i, name := range ignoreNames {
		e, p := found[i], abs+"/"+name
		ahead := e == nil && next != "" && name > next
		switch {
		case i == 0 && e != nil:
			git = e.Type()
		case i == 0 && ahead:
			if pi, err := f.s.fsys.Lstat(f.ctx, p, ""); err == nil && pi != nil {
				git = pi.Type
			}
		case e != nil && e.Type() == fs.TypeFile:
			*dst[i] = f.content(e)
		case e != nil && e.Type() == fs.TypeSymlink, ahead:
			*dst[i] = f.read(p)
		}
	}
	files.Git = git != ""
	if git == fs.TypeDirectory {
		files.Exclude = f.read(abs + "/.git/info/exclude")
	}
	return files, f.ctx.Err()
}

// content reads an ignore file the walk visited, without a byte-order
// mark, as ReadText would.
func (f *filter) content(e fs.WalkEntry) []byte {
	rc, err := e.Open(f.ctx)
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil
	}
	return bytes.TrimPrefix(b, bomUTF8)
}

// read reads the ignore file at path, following a symlink.
func (f *filter) read(path string) []byte {
	pi, err := f.s.fsys.Lstat(f.ctx, path, "")
	if err != nil || pi == nil || (pi.Type != fs.TypeFile && pi.Type != fs.TypeSymlink) {
		return nil // a FIFO must not block the walk
	}
	text, err := f.s.fsys.ReadText(f.ctx, pi.Target)
	if err != nil {
		return nil
	}
	return []byte(text)
}
