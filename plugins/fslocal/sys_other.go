//go:build !linux

package fslocal

import "os"

// startWriteback is a no-op: there is no portable way to start writeback
// early; the final fsync does all of it.
func startWriteback(*os.File, int64, int64) {}
