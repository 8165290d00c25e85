package ignore

import "strings"

// Files are the ignore files found in one directory (nil: absent) and
// whether it holds a .git entry (a directory, or a file as in a submodule).
type Files struct {
	RgIgnore, Ignore, GitIgnore, Exclude []byte
	Git                                  bool
}

// The kinds of ignore file, strongest first.
const (
	kindRg = iota
	kindIgnore
	kindGit
	kindExclude
	kinds
)

// Level is the ignore state below one directory: its own files on top of
// its parent's. Levels are immutable, so one walk can share them across
// goroutines.
type Level struct {
	depth int
	files [kinds]*Gitignore
	git   bool
	// rules is the nearest level, this one or above, with any ignore rule;
	// repo the nearest with a .git entry. Both skip the empty levels most
	// directories are.
	rules, repo *Level
	parent      *Level
}

// Root is the state above the workspace: nothing applies.
func Root() *Level { return &Level{} }

// Child is the state of dir (relative to the workspace, "" for the workspace
// itself), holding files. A walk builds the chain from Root through the
// workspace and every directory above its search root, so the ignore files
// of the root's ancestors inside the workspace apply below it.
func (l *Level) Child(dir string, f Files) *Level {
	c := &Level{depth: l.depth + 1, git: f.Git, parent: l, rules: l.rules, repo: l.repo}
	for k, content := range [kinds][]byte{f.RgIgnore, f.Ignore, f.GitIgnore, f.Exclude} {
		if content == nil {
			continue
		}
		if g := ParseGitignore(dir, content); len(g.rules) > 0 {
			c.files[k] = g
			c.rules = c
		}
	}
	if f.Git {
		c.repo = c
	}
	return c
}

// Ignored reports whether the walk skips an entry below l (path relative to
// the workspace), in ripgrep's order:
//  1. the override, when it has a verdict, decides;
//  2. the ignore files: for each kind the nearest level with a verdict wins,
//     and the strongest kind with one decides (.rgignore, .ignore,
//     .gitignore, .git/info/exclude). The last two count only inside a
//     repository, and only up to its root (the nearest level with .git);
//  3. a hidden name (leading '.') is skipped unless step 2 whitelisted it.
func (l *Level) Ignored(o *Override, path string, isDir bool) bool {
	switch o.Match(path, isDir) {
	case Whitelist:
		return false
	case Ignore:
		return true
	}
	switch l.matchFiles(path, isDir) {
	case Whitelist:
		return false
	case Ignore:
		return true
	}
	return hidden(path)
}

func (l *Level) matchFiles(path string, isDir bool) Match {
	var verdict [kinds]Match
	for lv := l.rules; lv != nil; lv = lv.parent.rules {
		inRepo := l.repo != nil && lv.depth >= l.repo.depth
		for k, g := range lv.files {
			if g == nil || verdict[k] != None || (k >= kindGit && !inRepo) {
				continue
			}
			verdict[k] = g.Match(path, isDir)
		}
		if verdict[kindRg] != None {
			break // nothing weaker can change the answer
		}
	}
	for _, m := range verdict {
		if m != None {
			return m
		}
	}
	return None
}

// hidden reports a name starting with '.'. As in ripgrep, a path ending in
// '.' has no name to judge, so ".a." is not hidden.
func hidden(path string) bool {
	if path == "" || path[len(path)-1] == '.' {
		return false
	}
	return path[strings.LastIndexByte(path, '/')+1] == '.'
}
