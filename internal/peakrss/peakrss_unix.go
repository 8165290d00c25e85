//go:build unix

package peakrss

import (
	"os"
	"runtime"
	"syscall"
)

func of(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	// getrusage's ru_maxrss is in bytes on Darwin and in KiB elsewhere.
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss), true
	}
	return int64(ru.Maxrss) << 10, true
}
