// Package peakrss reads peak resident set sizes, for the tests and benchmark
// harnesses that bound memory: a finished child's (Of) and this process's
// own high-water mark (Self, with Reset to start it again).
package peakrss

import (
	"bytes"
	"os"
	"strconv"
)

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
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	_, rest, ok := bytes.Cut(status, []byte("VmHWM:"))
	if !ok {
		return 0, false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	kib, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))), 10, 64)
	if err != nil {
		return 0, false
	}
	return kib << 10, true
}

// Reset starts the high-water mark again from the current RSS (Linux's
// clear_refs 5); elsewhere it does nothing.
func Reset() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
