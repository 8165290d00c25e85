//go:build unix

package toolsearch_test

import (
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at path, a special file the walk must not list.
func mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}
