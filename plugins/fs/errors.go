package fs

import "fmt"

// The stable error codes.
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

// Error is the provider error: a model-facing message and a stable code.
// errors.Is(err, &Error{Code: X}) matches by code.
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

// Is matches another *Error by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == ""
}
