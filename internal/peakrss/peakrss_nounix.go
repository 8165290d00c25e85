//go:build !unix

package peakrss

import "os"

func of(*os.ProcessState) (int64, bool) { return 0, false }
