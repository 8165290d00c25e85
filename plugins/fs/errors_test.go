package fs

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

func TestClip(t *testing.T) {
	long := strings.Repeat("a", 1024)
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"short", "src/a.go", "src/a.go"},
		{"at the limit", long, long},
		{"one over", long + "b", long + "…(1 bytes more)"},
		{"80 KB", strings.Repeat("d/", 40960), strings.Repeat("d/", 512) + "…(80896 bytes more)"},
		// "é" is two bytes; one straddling byte 1024 is cut before it.
		{"at a rune boundary", strings.Repeat("a", 1023) + "éz", strings.Repeat("a", 1023) + "…(3 bytes more)"},
		{"invalid UTF-8", strings.Repeat("\x80", 2000), strings.Repeat("\x80", 1021) + "…(979 bytes more)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clip(tt.in); got != tt.want {
				t.Fatalf("Clip = %q (%d bytes), want %q", got, len(got), tt.want)
			}
		})
	}
}
