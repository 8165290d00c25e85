// Package yamlpatch edits a YAML document as text: it replaces, adds or
// removes the value at a path and leaves every other byte as it was.
//
// Decoding a file and encoding it again would lose what a person wrote
// around the values: comments, blank lines, quoting, flow or block style,
// indentation and line endings. A config file that the program writes back
// must keep them, so the package parses the document only to find where
// each node lies (go.yaml.in/yaml/v4 gives the line and column where a node
// starts; the package finds where it ends) and splices the new text into
// that byte range. Set edits no more than it must: when a config mapping
// changes one key, only that key's value is rewritten. What it writes is
// rendered in the style of its surroundings: flow inside flow, block
// indented as its siblings, the old quoting kept when the new string
// allows it, CRLF when the file uses it.
//
// Every result is checked before it is returned: the output must parse and
// mean exactly the input with the one change applied, so a document the
// package cannot patch cleanly gives an error and never a damaged file.
// That is how it refuses, with ErrUnsupported, an edit of a value that an
// alias elsewhere shares, which would change more than the path. A path
// does not go through an alias, and in a stream of several documents only
// the first is edited.
package yamlpatch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path names a node by its steps from the document's root: an int selects
// an item of a sequence, a string a key of a mapping. Path{2, "config"} is
// the config of the third entry of a top-level sequence.
type Path []any

// String formats p as [2].config.readLimit; a key that is not a plain word
// is quoted, as in ["a b"].
func (p Path) String() string {
	if len(p) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for i, s := range p {
		switch s := s.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(s) + "]")
		case string:
			if isWord(s) {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(s)
			} else {
				b.WriteString("[" + strconv.Quote(s) + "]")
			}
		default:
			fmt.Fprintf(&b, "[%T?]", s)
		}
	}
	return b.String()
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// The kinds of failure, for errors.Is on an *Error.
var (
	// ErrSyntax: the input is not one well-formed YAML document.
	ErrSyntax = errors.New("not valid YAML")
	// ErrNotFound: a step names a key or index that is not there.
	ErrNotFound = errors.New("not found")
	// ErrExists: Insert names a key that is already there.
	ErrExists = errors.New("key already present")
	// ErrKind: a step does not fit the node, as an index into a mapping.
	ErrKind = errors.New("wrong kind of node")
	// ErrUnsupported: the edit is valid but cannot be made as text without
	// changing more than the value, e.g. through an alias or onto an anchor
	// that other nodes share.
	ErrUnsupported = errors.New("cannot patch as text")
)

// Error reports a failed edit: the path asked for, the position (1-based,
// 0 when unknown) of the node where it failed, and one of the Err values
// above, possibly wrapped with detail.
type Error struct {
	Path      Path
	Line, Col int
	Err       error
}

func (e *Error) Error() string {
	msg := "yamlpatch: " + e.Path.String()
	if e.Line > 0 {
		msg += " (line " + strconv.Itoa(e.Line) + ", col " + strconv.Itoa(e.Col) + ")"
	}
	return msg + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Insert adds the key path[len(path)-1] with value as the first entry of
// its mapping (where an id reads best). The key must be absent.
func Insert(src []byte, path Path, value any) ([]byte, error) {
	return edit(src, path, opInsert, value)
}

// Delete removes the mapping key or sequence item at path, with the lines
// it alone occupies; comment lines above it stay, as they may speak of
// more than it. A collection left empty becomes {} or [].
func Delete(src []byte, path Path) ([]byte, error) {
	return edit(src, path, opDelete, nil)
}
