//go:build !linux && !darwin && !windows

package confine

import "os"

// birthNs is 0: os.FileInfo has no creation time here.
func birthNs(os.FileInfo) int64 { return 0 }
