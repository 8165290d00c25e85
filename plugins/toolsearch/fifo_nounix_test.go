//go:build !unix

package toolsearch_test

import "testing"

// mkfifo: this platform has no FIFOs in its filesystem.
func mkfifo(t testing.TB, path string) {
	t.Skip("no FIFOs on this platform")
}
