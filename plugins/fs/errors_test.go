package fs

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestErrorIsByCode(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", Errorf(CodeStaleVersion, `cannot write "%s": file changed since it was read`, "/w/a"))
	if !errors.Is(err, ErrStaleVersion) || !errors.Is(err, &Error{Code: CodeStaleVersion}) {
		t.Error("a stale error does not match its sentinel")
	}
	if errors.Is(err, ErrNotFound) {
		t.Error("a stale error matches FS_NOT_FOUND")
	}
	if errors.Is(err, &Error{Code: CodeStaleVersion, Message: "other"}) {
		t.Error("a target with a message matches a different message")
	}
	if got := CodeOf(err); got != CodeStaleVersion {
		t.Errorf("CodeOf = %q", got)
	}
	if got := CodeOf(errors.New("plain")); got != "" {
		t.Errorf("CodeOf(plain) = %q", got)
	}
	var e *Error
	if !errors.As(err, &e) || e.Name() != "FsError" || e.ErrorCode() != CodeStaleVersion || e.Error() != `cannot write "/w/a": file changed since it was read` {
		t.Errorf("error = %#v", e)
	}
}

func TestAborted(t *testing.T) {
	err := Aborted("read", context.Canceled)
	if err.Message != "read aborted" || err.Code != CodeAborted || !errors.Is(err, context.Canceled) || !errors.Is(err, ErrAborted) {
		t.Errorf("Aborted = %#v", err)
	}
}
