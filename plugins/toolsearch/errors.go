package toolsearch

import (
	"strconv"

	"github.com/gordis-run/gordis/registry"
)

// The stable codes of a failed search. Argument mistakes are plain errors
// and a refused root is the provider's FsError; everything else is one of
// these.
const (
	CodeInvalidPattern    = "SEARCH_INVALID_PATTERN"
	CodeFailed            = "SEARCH_FAILED"
	CodeRawOutputOverflow = "SEARCH_RAW_OUTPUT_OVERFLOW"
	CodeAborted           = "SEARCH_ABORTED"
)

// SearchError is a failed search: a model-facing message worded as
// upstream's ripgrep-backed tools word it, and a stable code.
type SearchError struct {
	Code    string
	Message string
	Err     error // cause, if any; never part of Message
}

var _ registry.CodedError = (*SearchError)(nil)

func (e *SearchError) Error() string { return e.Message }

// Name is the error family name shown to models: "SearchError".
func (e *SearchError) Name() string { return "SearchError" }

// ErrorCode returns the stable code (the registry reads Name and ErrorCode).
func (e *SearchError) ErrorCode() string { return e.Code }

func (e *SearchError) Unwrap() error { return e.Err }

// searchFailed is what upstream reports when rg exits 2 without a pattern
// error; detail is rg's stderr without its "rg: " prefix.
func searchFailed(tool, detail string, cause error) *SearchError {
	return &SearchError{Code: CodeFailed, Message: tool + " search failed (exit 2): rg: " + detail, Err: cause}
}

// patternRejected is a regex or glob that rg refuses to compile.
func patternRejected(tool string, cause error) *SearchError {
	return &SearchError{Code: CodeInvalidPattern, Message: tool + " pattern rejected by ripgrep: rg: " + cause.Error(), Err: cause}
}

// aborted is a search cut short by the call's deadline or its caller.
func aborted(tool string, cause error) *SearchError {
	return &SearchError{Code: CodeAborted, Message: tool + " was aborted before completion (tool timeout or caller cancellation)", Err: cause}
}

// overflow is a search whose raw output passed the configured cap.
func overflow(tool string, n, limit int64) *SearchError {
	return &SearchError{Code: CodeRawOutputOverflow, Message: tool + " produced " + strconv.FormatInt(n, 10) +
		" bytes of raw output, over the " + strconv.FormatInt(limit, 10) + "-byte cap; narrow pattern, path, or include and retry"}
}

// The rest of rg 14.1.1's texts the model sees after "rg: ".
const (
	noFilesSearched = "No files were searched, which means ripgrep probably applied a filter you didn't expect.\nRunning with --debug will show why files are being skipped."
	multilineHint   = "\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched."
)
