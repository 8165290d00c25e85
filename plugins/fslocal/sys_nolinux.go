//go:build !linux

package fslocal

import "os"

// startWriteback is a no-op: there is no portable way to start writeback
// early; the final fsync does all of it.
func startWriteback(*os.File, int64, int64) {}

// spaceOS is empty: the tree walk opens files through the portable methods.
type spaceOS interface{}

// accessNoFollow is 0: macOS documents no AT_SYMLINK_NOFOLLOW for
// faccessat, so its check follows a target swapped for a link.
const accessNoFollow = 0
