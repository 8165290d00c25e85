//go:build !linux

package fslocal

import "os"

// startWriteback is a no-op: there is no portable way to start writeback
// early; the final fsync does all of it.
func startWriteback(*os.File, int64, int64) {}

// holdReplaced is a no-op: the replaced file is freed on the rename.
func holdReplaced(*root, string) (release func()) { return func() {} }
