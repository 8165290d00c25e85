package toolsearch

import (
	"errors"

	"github.com/gordis-run/gordis/plugins/fs"
)

// The argument structs are what the registry derives each tool's JSON
// Schema from. The object is open: undeclared keys are ignored.

type globArgs struct {
	Pattern string  `json:"pattern" jsonschema_description:"Glob pattern to match file paths against (e.g. \"**/*.ts\", \"src/**/*.test.js\"). A pattern with no \"/\" matches the basename at any depth, so \"*\" and \"*.ts\" both search the whole tree; include a separator to anchor the depth."`
	Path    *string `json:"path,omitempty" jsonschema_description:"Directory to search in. Defaults to the session workspace; a relative path resolves against it."`
}

type grepArgs struct {
	Pattern string  `json:"pattern" jsonschema_description:"Regular expression to search for (ripgrep syntax)."`
	Path    *string `json:"path,omitempty" jsonschema_description:"File or directory to search. Defaults to the session workspace; a relative path resolves against it."`
	Include *string `json:"include,omitempty" jsonschema_description:"One glob filter for which files to search (e.g. \"*.ts\", \"*.{js,jsx}\"). Not a list; negation is not supported."`
}

// Validation failures are plain errors: the model sees the message and no
// code. They all come before the root is resolved.
var (
	errPattern         = errors.New("pattern must be a non-empty string")
	errPath            = errors.New("path must be a non-empty string when given")
	errIncludeBlank    = errors.New("include must be a non-empty glob when given")
	errIncludeNegated  = errors.New(`include must be a positive glob filter; negated patterns ("!…") are not supported`)
	errIncludeMultiple = errors.New("include must be one glob, not a comma-separated list (use {a,b} alternation instead)")
)

// validPath checks an optional path; "" stands for "not given".
func validPath(p *string) (string, error) {
	if p == nil {
		return "", nil
	}
	if fs.Blank(*p) {
		return "", errPath
	}
	return *p, nil
}

type globRequest struct {
	pattern, path string
}

// parse checks pattern, then path. A blank pattern is refused; anything
// else, " #x" or a U+0085 included, is a glob line for the matcher.
func (a globArgs) parse() (globRequest, error) {
	if fs.Blank(a.Pattern) {
		return globRequest{}, errPattern
	}
	p, err := validPath(a.Path)
	return globRequest{pattern: a.Pattern, path: p}, err
}

type grepRequest struct {
	pattern, path, include string
}

// parse checks pattern, then path, then include. Only an empty pattern is
// refused: whitespace is a regex.
func (a grepArgs) parse() (grepRequest, error) {
	if a.Pattern == "" {
		return grepRequest{}, errPattern
	}
	p, err := validPath(a.Path)
	if err != nil {
		return grepRequest{}, err
	}
	r := grepRequest{pattern: a.Pattern, path: p}
	if a.Include == nil {
		return r, nil
	}
	switch inc := *a.Include; {
	case fs.Blank(inc):
		return r, errIncludeBlank
	case inc[0] == '!':
		return r, errIncludeNegated
	case hasTopLevelComma(inc):
		return r, errIncludeMultiple
	default:
		r.include = inc
	}
	return r, nil
}

// hasTopLevelComma reports a comma outside every {…}; the depth never goes
// below zero, so "a},b" is a list while "{a,{b,c}}" is one glob.
func hasTopLevelComma(glob string) bool {
	depth := 0
	for i := 0; i < len(glob); i++ {
		switch glob[i] {
		case '{':
			depth++
		case '}':
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 {
				return true
			}
		}
	}
	return false
}
