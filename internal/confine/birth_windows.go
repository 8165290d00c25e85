package confine

import (
	"os"
	"syscall"
)

// birthNs is the file's creation time: a rename over a file installs a file
// created later, so the version changes with it.
func birthNs(fi os.FileInfo) int64 {
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		return d.CreationTime.Nanoseconds()
	}
	return 0
}
