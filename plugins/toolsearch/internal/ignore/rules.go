package ignore

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Match is a rule's verdict on a path.
type Match int

const (
	None Match = iota
	Ignore
	Whitelist
)

// rule is one gitignore line.
type rule struct {
	m       *matcher
	negated bool // a leading '!'
	dirOnly bool // a trailing '/'
}

// parseLine applies gitignore's line rules as ripgrep does and compiles the
// glob. ok is false for a comment or a blank line.
func parseLine(line string) (r rule, ok bool, err error) {
	if strings.HasPrefix(line, "#") {
		return rule{}, false, nil
	}
	if !strings.HasSuffix(line, `\ `) {
		line = strings.TrimRightFunc(line, unicode.IsSpace) // White_Space, as Rust's trim_end
	}
	if line == "" {
		return rule{}, false, nil
	}
	original := line
	anchored := false
	if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	} else {
		if strings.HasPrefix(line, "!") {
			r.negated, line = true, line[1:]
		}
		if strings.HasPrefix(line, "/") {
			anchored, line = true, line[1:]
		}
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly, line = true, line[:len(line)-1]
		line = strings.TrimSuffix(line, `\`) // an escaped trailing slash
	}
	// A glob with no '/' matches the base name at any depth.
	if !anchored && !strings.Contains(line, "/") && !strings.HasPrefix(line, "**/") && line != "**" {
		line = "**/" + line
	}
	// "dir/**" matches what is inside dir, not dir itself.
	if strings.HasSuffix(line, "/**") {
		line += "/*"
	}
	tokens, reason := parseGlob(line)
	if reason != "" {
		return rule{}, false, &GlobError{Glob: original, Reason: reason}
	}
	r.m = compileGlob(tokens)
	return r, true, nil
}

// rules is an ordered list of lines; the last matching one decides.
type rules []rule

func (rs rules) match(path string, isDir bool) (rule, bool) {
	c := newCandidate(path)
	for i := len(rs) - 1; i >= 0; i-- {
		if r := rs[i]; (!r.dirOnly || isDir) && r.m.match(&c) {
			return r, true
		}
	}
	return rule{}, false
}

// Override is ripgrep's --glob list: globs in order, the last matching one
// wins; a plain glob whitelists and a "!glob" ignores. Once the list holds a
// plain glob, a file it does not match is ignored (a directory is not, so
// the walk still descends to reach matching files).
type Override struct {
	rules  rules
	plains int
}

// NewOverride compiles globs, each one gitignore line. The first glob
// ripgrep refuses is the error, a *GlobError.
func NewOverride(globs ...string) (*Override, error) {
	o := &Override{}
	for _, g := range globs {
		r, ok, err := parseLine(g)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if !r.negated {
			o.plains++
		}
		o.rules = append(o.rules, r)
	}
	return o, nil
}

// Match judges path, relative to the workspace and '/'-separated.
func (o *Override) Match(path string, isDir bool) Match {
	if o == nil || len(o.rules) == 0 {
		return None
	}
	r, ok := o.rules.match(strings.TrimPrefix(path, "./"), isDir)
	switch {
	case ok && r.negated:
		return Ignore
	case ok:
		return Whitelist
	case o.plains > 0 && !isDir:
		return Ignore
	}
	return None
}

// Empty reports a list with no effective glob (none, or all comments and
// blanks): it filters nothing.
func (o *Override) Empty() bool { return o == nil || len(o.rules) == 0 }

// VCSExcludes is the glob tool's exclusion of version-control metadata:
// each name, and everything below it, at any depth.
func VCSExcludes() []string {
	var globs []string
	for _, v := range []string{".git", ".svn", ".hg", ".bzr", ".jj", ".sl"} {
		globs = append(globs, "!**/"+v, "!**/"+v+"/**")
	}
	return globs
}

// Gitignore is one ignore file, anchored at the directory that holds it.
type Gitignore struct {
	prefix string // dir + "/", or "" for the workspace
	rules  rules
}

// ParseGitignore reads an ignore file held by dir (relative to the
// workspace, "" for the workspace itself). Lines ripgrep cannot parse are
// skipped; as ripgrep reads lines as UTF-8, the file ends at the first line
// that is not.
func ParseGitignore(dir string, content []byte) *Gitignore {
	g := &Gitignore{}
	if dir != "" {
		g.prefix = dir + "/"
	}
	for len(content) > 0 {
		line := content
		if i := bytes.IndexByte(content, '\n'); i >= 0 {
			line, content = bytes.TrimSuffix(content[:i], []byte("\r")), content[i+1:]
		} else {
			content = nil
		}
		if !utf8.Valid(line) {
			break
		}
		if r, ok, err := parseLine(string(line)); ok && err == nil {
			g.rules = append(g.rules, r)
		}
	}
	return g
}

// Match judges path, relative to the workspace. A path outside the file's
// directory is matched as given, as ripgrep does.
func (g *Gitignore) Match(path string, isDir bool) Match {
	if g == nil || len(g.rules) == 0 {
		return None
	}
	path = strings.TrimPrefix(path, "./")
	if g.prefix != "" {
		path = strings.TrimPrefix(path, g.prefix)
	}
	r, ok := g.rules.match(path, isDir)
	switch {
	case !ok:
		return None
	case r.negated:
		return Whitelist
	}
	return Ignore
}
