package fslocal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gordis-run/gordis/internal/confine"
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
// when the writer dies. It reaches dir by its name, as an unconfined
// provider does; [FS.SweepRoots] sweeps a provider's roots through their
// handles. The first write or edit into any directory sweeps that
// directory itself. The error reports a directory that could not be read
// or a staging directory that could not be removed, or ctx's error when
// it ended first; dir missing is not an error.
func Sweep(ctx context.Context, dir string) error {
	dir = filepath.Clean(dir)
	r, name := hostRootOf(dir)
	return sweepDir(ctx, r, name, dir)
}

// SweepRoots sweeps (see [Sweep]) the top of the workspace and of every
// read-write root, through the roots' handles; an unconfined provider
// sweeps its cwd. The plugin does it when it starts, and only logs a
// failure: a sweep only tidies, and what it leaves is hidden from listings
// and swept again by the first write there. The error joins every root's.
func (f *FS) SweepRoots(ctx context.Context) (err error) {
	if err := f.calls.enter("sweep", f.cwd); err != nil {
		return err
	}
	defer f.calls.done("sweep", f.cwd, &err)
	if f.roots == nil {
		return Sweep(ctx, f.cwd)
	}
	var errs []error
	for _, r := range f.roots {
		if !r.readOnly {
			errs = append(errs, sweepDir(ctx, r, r.dir.File("."), r.dir.Path()))
		}
	}
	return errors.Join(errs...)
}

// sweepDir sweeps the directory name of r, whose key is key, and
// remembers a sweep that found nothing to remove (see swept).
func sweepDir(ctx context.Context, r *root, name, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := r.open(name, confine.DirFlags, 0)
	if err != nil {
		if isAbsent(err) {
			return nil
		}
		return err
	}
	defer dir.Close()
	removed, busy, err := sweep(ctx, dir)
	if err == nil && removed == 0 && busy == 0 {
		swept.Store(key, struct{}{})
	}
	return err
}

// swept holds the keys of the directories whose last sweep found nothing
// to remove. It is shared by every provider of the process, because
// leftovers belong to the directory, not to a provider: a directory is
// read once, not once per write, and again only after a sweep removed
// something there (crashes happen there, so another may follow) or was
// cut short or left a staging directory unjudged.
// A sweep that failed is not repeated: a staging directory this process
// may not remove (another user's) would otherwise cost every write a
// read of the directory. It grows by one entry per directory written.
var swept sync.Map

// sweepOnce sweeps dir, a directory opened through its root whose key is
// key, unless it was swept before. Failures are left for the write itself
// to meet (a cancellation at its next check): a sweep only tidies.
func sweepOnce(ctx context.Context, dir *os.File, key string) {
	if _, done := swept.LoadOrStore(key, struct{}{}); done {
		return
	}
	if removed, busy, _ := sweep(ctx, dir); removed > 0 || busy > 0 || ctx.Err() != nil {
		swept.Delete(key)
	}
}
