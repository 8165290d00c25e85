package fs

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/gordis-run/gordis/internal/clip"
)

// The stable error codes. They are part of the model-facing contract: a tool
// result carries the code next to the message.
const (
	CodeNotFound       = "FS_NOT_FOUND"
	CodeNotDirectory   = "FS_NOT_DIRECTORY"
	CodeNotText        = "FS_NOT_TEXT"
	CodeNotRegularFile = "FS_NOT_REGULAR_FILE"
	CodePermission     = "FS_PERMISSION_DENIED"
	CodeSandboxDenied  = "FS_SANDBOX_DENIED"
	CodeIO             = "FS_IO_ERROR"
	CodeStaleVersion   = "FS_STALE_VERSION"
	CodeNotObserved    = "FS_NOT_OBSERVED"
	CodeAmbiguousEdit  = "FS_AMBIGUOUS_EDIT"
	CodeEditNotFound   = "FS_EDIT_NOT_FOUND"
	CodeAborted        = "FS_ABORTED"
)

// Sentinels, one per code, for errors.Is: errors.Is(err, fs.ErrStaleVersion)
// holds for every *Error with that code, whatever its message.
var (
	ErrNotFound       = &Error{Code: CodeNotFound}
	ErrNotDirectory   = &Error{Code: CodeNotDirectory}
	ErrNotText        = &Error{Code: CodeNotText}
	ErrNotRegularFile = &Error{Code: CodeNotRegularFile}
	ErrPermission     = &Error{Code: CodePermission}
	ErrSandboxDenied  = &Error{Code: CodeSandboxDenied}
	ErrIO             = &Error{Code: CodeIO}
	ErrStaleVersion   = &Error{Code: CodeStaleVersion}
	ErrNotObserved    = &Error{Code: CodeNotObserved}
	ErrAmbiguousEdit  = &Error{Code: CodeAmbiguousEdit}
	ErrEditNotFound   = &Error{Code: CodeEditNotFound}
	ErrAborted        = &Error{Code: CodeAborted}
)

// Error is the provider error: a model-facing message and a stable code.
// errors.Is(err, &Error{Code: X}) (or one of the Err* sentinels) matches by
// code; Err keeps the underlying cause (an OS error, a context error) for
// logs and errors.Is, and never appears in Message.
type Error struct {
	Code    string
	Message string
	Err     error // cause, if any
}

// Errorf builds an *Error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Message }

// Name is the error family name shown to models: "FsError".
func (e *Error) Name() string { return "FsError" }

// ErrorCode returns the stable code (the registry reads Name and ErrorCode).
func (e *Error) ErrorCode() string { return e.Code }

func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error by code when that one has no message (a
// sentinel), so a specific error never matches a different message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == ""
}

// CodeOf returns the code of the first *Error in err's chain, or "".
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Aborted returns the cancellation error of an operation: "<verb> aborted"
// with CodeAborted, wrapping cause (normally ctx.Err()).
func Aborted(verb string, cause error) *Error {
	return &Error{Code: CodeAborted, Message: verb + " aborted", Err: cause}
}

// Clip bounds caller input (a path, a pattern, a value) that a
// model-facing error message quotes, so that an 80 KB path does not make
// an 80 KB message: s unchanged up to 1024 bytes, else its first 1024
// bytes, cut back to a UTF-8 boundary, followed by "…(N bytes more)" with
// N the bytes left out in decimal digits, e.g. "…(80896 bytes more)".
// Providers build their messages with it, as the seam's own do.
func Clip(s string) string { return clip.String(s) }

// Blank reports whether path is empty once trimmed the way JavaScript's
// String.prototype.trim trims (the upstream contract's "non-empty string"
// test): it strips U+FEFF and every Zs space but not U+0085, unlike
// strings.TrimSpace.
func Blank(path string) bool {
	return strings.TrimFunc(path, isJSSpace) == ""
}

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', '\u2028', '\u2029', '\uFEFF':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}
