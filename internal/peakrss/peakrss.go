// Package peakrss reads peak resident set sizes, for the tests and benchmark
// harnesses that bound memory: a finished child's (Of), this process's own
// high-water mark (Self, with Reset to start it again), and a live
// process's resident memory (Status).
package peakrss

import "os"

// Of returns the peak RSS of the finished process in bytes, and false where
// the platform does not report it. On Linux the figure wait4 reports for a
// child can include the memory of the process that started it; a child
// that reports Self is exact.
func Of(ps *os.ProcessState) (int64, bool) {
	if ps == nil {
		return 0, false
	}
	return of(ps)
}

// Self returns this process's resident high-water mark (VmHWM) in bytes,
// and false where /proc does not say (anything but Linux).
func Self() (int64, bool) {
	m, err := Status(os.Getpid())
	return m.HWM, err == nil
}

// Reset starts the high-water mark again from the current RSS (Linux's
// clear_refs 5); elsewhere it does nothing.
func Reset() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
