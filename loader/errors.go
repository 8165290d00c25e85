package loader

import (
	"errors"
	"fmt"
	"strings"
)

// Error is one problem in a config file, at the position of the YAML node
// that causes it: `FILE:LINE:COL: entry "ID" (NAME): message`.
type Error struct {
	File   string
	Line   int // 1-based; 0 when the position is unknown
	Column int // 1-based; 0 when only the line is known
	ID     string
	Name   string // the entry's plugin name
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.ID != "" {
		fmt.Fprintf(&b, "entry %q", e.ID)
		if e.Name != "" {
			fmt.Fprintf(&b, " (%s)", e.Name)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in one file, in file order, as
// go/scanner.ErrorList gathers them.
type Errors []*Error

func (l Errors) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.Is and errors.As look at every error.
func (l Errors) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// ErrDuplicateID is wrapped by the error for an id used twice in one file.
var ErrDuplicateID = errors.New("duplicate id")
