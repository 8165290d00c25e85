package fslocal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A staging directory is named stagingPrefix followed by the 16 lowercase
// hex digits of a random nonce, and holds one file, stagedFile. The name
// has a fixed shape and length, whatever the target's name, so that it
// never exceeds NAME_MAX beside a 255-byte name and a sweep or a listing
// recognises it by its name alone.
const (
	stagingPrefix = ".gordis-staging-"
	nonceLen      = 16
	stagedFile    = "data"
)

// isStagingName reports whether name has the shape of a staging
// directory's name.
func isStagingName(name string) bool {
	nonce, ok := strings.CutPrefix(name, stagingPrefix)
	if !ok || len(nonce) != nonceLen {
		return false
	}
	for i := range len(nonce) {
		if c := nonce[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isStagingEntry reports a directory entry that is a staging directory
// (live or left by a crash): listings leave it out. A file that merely
// has such a name is listed.
func isStagingEntry(e os.DirEntry) bool {
	return e.IsDir() && isStagingName(e.Name())
}

// Sweep removes from dir the staging directories that writers which are
// gone (killed, crashed, powered off) left behind, and keeps those of
// live writers, in this process or any other: a writer holds a lock on
// its staged file for as long as it runs, and the kernel drops the lock
// when the writer dies. Run it over a provider's workspace when the
// provider starts; the first write or edit into any directory sweeps
// that directory itself. The error reports a directory that could not be
// read or a staging directory that could not be removed, or ctx's error
// when it ended first; dir missing is not an error.
func Sweep(ctx context.Context, dir string) error {
	dir = filepath.Clean(dir)
	removed, busy, err := sweep(ctx, dir)
	if err == nil && removed == 0 && busy == 0 {
		swept.Store(dir, struct{}{})
	}
	return err
}

// swept holds the directories whose last sweep found nothing to remove.
// It is shared by every provider of the process, because leftovers
// belong to the directory, not to a provider: a directory is read once,
// not once per write, and again only after a sweep removed something
// there (crashes happen there, so another may follow) or was cut short
// or left a staging directory unjudged.
// A sweep that failed is not repeated: a staging directory this process
// may not remove (another user's) would otherwise cost every write a
// read of the directory. It grows by one entry per directory written.
var swept sync.Map

// sweepOnce sweeps dir, a clean path, unless it was swept before.
// Failures are left for the write itself to meet (a cancellation at its
// next check): a sweep only tidies.
func sweepOnce(ctx context.Context, dir string) {
	if _, done := swept.LoadOrStore(dir, struct{}{}); done {
		return
	}
	if removed, busy, _ := sweep(ctx, dir); removed > 0 || busy > 0 || ctx.Err() != nil {
		swept.Delete(dir)
	}
}
