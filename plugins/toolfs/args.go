package toolfs

import (
	"errors"
	"math"
	"strconv"

	"github.com/gordis-run/gordis/plugins/fs"
)

// The argument structs are what the registry derives each tool's JSON Schema
// from: snake_case names, and offset/limit as JSON numbers (not integers) so
// that 1.5 reaches the tool's own message instead of a schema violation.

type listArgs struct {
	Path   *string  `json:"path,omitempty" jsonschema_description:"Directory to list. Defaults to the session workspace; a relative path resolves against it."`
	Offset *float64 `json:"offset,omitempty" jsonschema_description:"1-based first entry to return. Defaults to 1; use the footer value to continue."`
}

type readArgs struct {
	FilePath string   `json:"file_path" jsonschema_description:"Path to read, resolved by the filesystem backend."`
	Offset   *float64 `json:"offset,omitempty" jsonschema_description:"1-based first line to return. Defaults to 1."`
	Limit    *float64 `json:"limit,omitempty" jsonschema_description:"Maximum number of lines to return. Defaults to 2000."`
}

type writeArgs struct {
	FilePath string `json:"file_path" jsonschema_description:"Path to write, resolved by the filesystem backend."`
	Content  string `json:"content" jsonschema_description:"Full UTF-8 text content to write."`
}

type editArgs struct {
	FilePath   string `json:"file_path" jsonschema_description:"Path to edit, resolved by the filesystem backend."`
	OldString  string `json:"old_string" jsonschema_description:"Literal text to replace. Must match exactly."`
	NewString  string `json:"new_string" jsonschema_description:"Literal replacement text. Use an empty string to delete the match."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema_description:"Replace all matches. Defaults to false; when false, old_string must appear exactly once."`
}

// Validation failures are plain errors: the model sees the message and no code.
var (
	errFilePath     = errors.New("file_path must be a non-empty string")
	errPath         = errors.New("path must be a non-empty string when given")
	errOffset       = errors.New("offset must be a positive integer")
	errLimit        = errors.New("limit must be a positive integer")
	errOldEmpty     = errors.New("old_string must be a non-empty string")
	errOldEqualsNew = errors.New("old_string and new_string must differ")
)

// maxExactInt is the largest float64 below which every integer is exact;
// larger offsets are clamped, which only changes how far out of range they are.
const maxExactInt = 1 << 53

// positiveInt validates an optional integer-valued number (2.0 counts) and
// returns def when it is absent. JSON carries no NaN or infinity.
func positiveInt(v *float64, def int, invalid error) (int, error) {
	if v == nil {
		return def, nil
	}
	if f := *v; f < 1 || f != math.Trunc(f) {
		return 0, invalid
	}
	return int(min(*v, maxExactInt)), nil
}

type listRequest struct {
	path   string
	offset int
}

func (a listArgs) parse() (listRequest, error) {
	r := listRequest{path: "."}
	if a.Path != nil {
		if fs.Blank(*a.Path) {
			return r, errPath
		}
		r.path = *a.Path
	}
	var err error
	r.offset, err = positiveInt(a.Offset, 1, errOffset)
	return r, err
}

type readRequest struct {
	path          string
	offset, limit int
}

func (a readArgs) parse(maxLimit int) (readRequest, error) {
	r := readRequest{path: a.FilePath}
	if fs.Blank(a.FilePath) {
		return r, errFilePath
	}
	var err error
	if r.offset, err = positiveInt(a.Offset, 1, errOffset); err != nil {
		return r, err
	}
	if r.limit, err = positiveInt(a.Limit, maxLimit, errLimit); err != nil {
		return r, err
	}
	if r.limit > maxLimit {
		return r, errors.New("limit must be less than or equal to " + strconv.Itoa(maxLimit))
	}
	return r, nil
}

func (a writeArgs) validate() error {
	if fs.Blank(a.FilePath) {
		return errFilePath
	}
	return nil
}

// validate checks old_string exactly as given: it is never trimmed, so " " is
// a valid literal, and the comparison happens before any newline handling.
func (a editArgs) validate() error {
	switch {
	case fs.Blank(a.FilePath):
		return errFilePath
	case a.OldString == "":
		return errOldEmpty
	case a.OldString == a.NewString:
		return errOldEqualsNew
	}
	return nil
}
