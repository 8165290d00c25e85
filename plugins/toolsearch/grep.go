package toolsearch

import (
	"context"
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
	ctx, cancel := context.WithTimeout(ctx, t.limits.timeout)
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
	return newSearch(ctx, s, m, include, t.limits.rawOutputMaxBytes).run()
}

// filter is the walk's side of a search: which entries it descends or
// searches, with the ignore files of every directory on the way down.
type filter struct {
	ctx     context.Context
	s       *scope
	include *ignore.Override
	// stack holds the levels of the directories the walk is inside, the
	// root's first; dir is each one's path below the root.
	stack []dirLevel
}

type dirLevel struct {
	dir   string
	level *ignore.Level
}

// enterRoot builds the level of a directory root: the ignore files of the
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
		files, err := f.ignoreFiles(abs)
		if err != nil {
			return err
		}
		lvl = lvl.Child(d, files)
	}
	f.stack = append(f.stack[:0], dirLevel{level: lvl})
	return nil
}

// level is the ignore state of the directory holding sub, leaving the
// directories the walk has left.
func (f *filter) level(sub string) *ignore.Level {
	for len(f.stack) > 1 {
		d := f.stack[len(f.stack)-1].dir
		if strings.HasPrefix(sub, d) && len(sub) > len(d) && sub[len(d)] == '/' {
			break
		}
		f.stack = f.stack[:len(f.stack)-1]
	}
	return f.stack[len(f.stack)-1].level
}

// enter decides on the directory sub and, when the walk descends it,
// reads its ignore files.
func (f *filter) enter(sub string) (bool, error) {
	parent := f.level(sub)
	path := f.s.match(sub)
	if parent.Ignored(f.include, path, true) {
		return false, nil
	}
	files, err := f.ignoreFiles(join(f.s.root.Path, sub))
	if err != nil {
		return false, err
	}
	f.stack = append(f.stack, dirLevel{dir: sub, level: parent.Child(path, files)})
	return true, nil
}

// searches decides on the regular file sub.
func (f *filter) searches(sub string) bool {
	return !f.level(sub).Ignored(f.include, f.s.match(sub), false)
}

// ignoreFiles reads the ignore files of the directory dir (a display
// path): .rgignore, .ignore and .gitignore, and, when dir holds a .git
// directory, .git/info/exclude. An absent or unreadable file is none.
func (f *filter) ignoreFiles(dir string) (ignore.Files, error) {
	files := ignore.Files{
		RgIgnore:  f.read(dir + "/.rgignore"),
		Ignore:    f.read(dir + "/.ignore"),
		GitIgnore: f.read(dir + "/.gitignore"),
	}
	if git, err := f.s.fsys.Lstat(f.ctx, dir+"/.git", ""); err == nil && git != nil {
		files.Git = true
		if git.Type == fs.TypeDirectory {
			files.Exclude = f.read(dir + "/.git/info/exclude")
		}
	}
	return files, f.ctx.Err()
}

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
