package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gordis-run/gordis/internal/clip"
	"github.com/gordis-run/gordis/internal/schema"
	"github.com/gordis-run/gordis/runtime"
)

// Error names the registry puts on failed results (ErrorInfo.Name).
const (
	NameArgs        = "ToolArgsError"
	NameAbort       = "AbortError"
	NameDenied      = "ToolDenied"
	NamePanic       = "ToolPanic"
	NameUnknown     = "ToolNotFound"
	NameUnavailable = "ToolUnavailable"
)

// Error codes the registry puts on failed results (ErrorInfo.Code).
const (
	CodeInvalidArgs           = "INVALID_ARGS"
	CodeAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
	CodeAborted               = "ABORTED"
	CodeDenied                = "TOOL_DENIED"
	CodePanic                 = "TOOL_PANIC"
	CodeUnknownTool           = "TOOL_NOT_FOUND"
	CodeUnavailable           = "TOOL_UNAVAILABLE"
)

// Messages of the registry's own failures.
const (
	msgAbortedBeforeDispatch = "tool call aborted before dispatch"
	msgAborted               = "tool call aborted"
	msgDenied                = "tool call denied"
)

// CodedError is an error a tool returns to give the model a stable name and
// code (fs.Error is one). The registry finds it with errors.As.
type CodedError interface {
	error
	Name() string
	ErrorCode() string
}

// ArgsError reports arguments that do not fit the tool's schema, or that
// fit it but cannot be decoded into the tool's argument type.
type ArgsError struct {
	Violations []string
}

var _ CodedError = (*ArgsError)(nil)

func (e *ArgsError) Error() string {
	return "invalid arguments: " + strings.Join(e.Violations, "; ")
}

func (e *ArgsError) Name() string      { return NameArgs }
func (e *ArgsError) ErrorCode() string { return CodeInvalidArgs }

// argsError turns a failure to validate or decode arguments (violations,
// not JSON, or a valid value the Go type cannot hold, say 2.0 for an int)
// into an *ArgsError.
func argsError(err error) *ArgsError {
	var (
		ve *schema.ValidationError
		te *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &ve):
		return &ArgsError{Violations: ve.Violations}
	case errors.As(err, &te) && te.Field != "":
		return &ArgsError{Violations: []string{fmt.Sprintf("%q: cannot use %s as %v", te.Field, clip.String(te.Value), te.Type)}}
	}
	return &ArgsError{Violations: []string{err.Error()}}
}

// panicError is a recovered panic of a tool body, renderer or classifier.
type panicError struct {
	tool  string
	value any
}

func (e *panicError) Error() string     { return fmt.Sprintf("tool %q panicked: %v", e.tool, e.value) }
func (e *panicError) Name() string      { return NamePanic }
func (e *panicError) ErrorCode() string { return CodePanic }

func failure(call *Call, message, name, code string) *Result {
	return &Result{
		CallID:  call.ID,
		Tool:    call.Tool,
		Text:    "Error: " + message,
		IsError: true,
		Error:   &ErrorInfo{Message: message, Name: name, Code: code},
	}
}

// fromError maps a failure: a CodedError anywhere in the chain lends its
// name and code; a service the tool's plugin lost while it shuts down or
// restarts makes the tool unavailable; any other error keeps only its
// message.
func fromError(call *Call, err error) *Result {
	var coded CodedError
	switch {
	case errors.As(err, &coded):
		return failure(call, err.Error(), coded.Name(), coded.ErrorCode())
	case errors.Is(err, runtime.ErrInactive), errors.Is(err, runtime.ErrServiceUnavailable):
		return unavailable(call, err)
	}
	return failure(call, err.Error(), "", "")
}

// unavailable is the result of a call whose tool is not there right now,
// with the runtime's reason if there is one.
func unavailable(call *Call, cause error) *Result {
	message := "the " + call.Tool + " tool is unavailable while its plugin stops or restarts"
	if cause != nil {
		message += " (" + cause.Error() + ")"
	}
	return failure(call, message+"; retry the call", NameUnavailable, CodeUnavailable)
}

func abortedBeforeDispatch(call *Call) *Result {
	return failure(call, msgAbortedBeforeDispatch, NameAbort, CodeAbortedBeforeDispatch)
}
