// Package peakrss reads the peak resident set size of a finished child
// process, for the tests and benchmark harnesses that bound memory.
package peakrss

import "os"

// Of returns the peak RSS of the finished process in bytes, and false where
// the platform does not report it.
func Of(ps *os.ProcessState) (int64, bool) {
	if ps == nil {
		return 0, false
	}
	return of(ps)
}
