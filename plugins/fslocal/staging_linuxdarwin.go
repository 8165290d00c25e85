//go:build linux || darwin

package fslocal

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gordis-run/gordis/internal/confine"
)

// stagingLocked says a staged file is locked while its writer lives (see
// lockStaging), so sweeps can remove what dead writers left.
const stagingLocked = true

// writable reports, as open(O_WRONLY) would decide it (effective ids,
// ACLs, root's override, a read-only mount), whether this process may
// write the file name in the directory dir, without opening it: an open
// for writing is seen by file watchers (a close after writing) and breaks
// others' leases. A symlink is judged itself where the platform allows it
// (see accessNoFollow).
func writable(dir *os.File, name string) error {
	return confine.WrapErrno("access", name, unix.Faccessat(int(dir.Fd()), name, unix.W_OK, unix.AT_EACCESS|accessNoFollow))
}

// parentDir is the directory a staging works in, open: every name of the
// staging is relative to its handle, so none can be led elsewhere by a
// symlink or a rename of a directory on the way to it.
type parentDir struct{ file *os.File }

// stageDir is a staging directory: its name in its parent, and its
// handle, which the staged file is named relative to.
type stageDir struct {
	name string
	file *os.File
}

// openParent opens the directory dir (a name relative to the root r) for
// a staging, making what is missing of it (see confine.MkdirAllAt): one
// component at a time from a handle on the root's top, never through a
// symlink (dir is a real name: a symlink on the way is a directory
// swapped since it was resolved, looked at again, then ErrChanged), and
// refused when one of the directories it goes through is a read-only
// root's, as fstat on the handle identifies it (see notReadOnly). So a
// write never stages or renames in a read-only subtree, whatever link or
// rename leads there: the directory checked is the one the staging works
// in. A symlink that stays on the way is judged by where it leads (see
// replacedDir).
func (f *FS) openParent(ctx context.Context, r *root, dir string) (parentDir, error) {
	top, err := r.open(r.dir.File("."), confine.DirFlags, 0)
	if err != nil {
		return parentDir{}, err
	}
	defer top.Close()
	file, err := confine.MkdirAllAt(top, dir, f.notReadOnly)
	if errors.Is(err, confine.ErrChanged) {
		err = f.replacedDir(ctx, r, dir, err)
	}
	return parentDir{file}, err
}

// mkstage makes the staging directory name, 0700 whatever the umask, and
// opens it. A failure after the mkdir returns the name, for remove.
func (p parentDir) mkstage(name string) (stageDir, error) {
	pfd := int(p.file.Fd())
	if _, err := confine.Retry(func() (int, error) { return 0, unix.Mkdirat(pfd, name, 0o700) }); err != nil {
		return stageDir{}, confine.WrapErrno("mkdirat", name, err)
	}
	fd, err := confine.Retry(func() (int, error) {
		return unix.Openat(pfd, name, confine.DirFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return stageDir{name: name}, confine.WrapErrno("openat", name, err)
	}
	s := stageDir{name, os.NewFile(uintptr(fd), name)}
	return s, s.file.Chmod(0o700)
}

// create makes the staged file in s, exclusively.
func (p parentDir) create(s stageDir) (*os.File, error) {
	fd, err := confine.Retry(func() (int, error) {
		return unix.Openat(int(s.file.Fd()), stagedFile, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return nil, confine.WrapErrno("openat", stagedFile, err)
	}
	return os.NewFile(uintptr(fd), stagedFile), nil
}

// rename puts the staged file of s in place of target.
func (p parentDir) rename(s stageDir, target string) error {
	_, err := confine.Retry(func() (int, error) {
		return 0, unix.Renameat(int(s.file.Fd()), stagedFile, int(p.file.Fd()), target)
	})
	if err == unix.EISDIR {
		err = unix.EEXIST // a directory is there: as os.Rename says it
	}
	return confine.WrapErrno("renameat", target, err)
}

// remove removes the staging directory s and the staged file in it, if
// still there; what is already gone is not an error.
func (p parentDir) remove(s stageDir) error {
	if s.file != nil {
		if err := unix.Unlinkat(int(s.file.Fd()), stagedFile, 0); err != nil && err != unix.ENOENT {
			return confine.WrapErrno("unlinkat", stagedFile, err)
		}
	}
	if err := unix.Unlinkat(int(p.file.Fd()), s.name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return confine.WrapErrno("unlinkat", s.name, err)
	}
	return nil
}

// close closes the handles of the staging directory s and of p.
func (p parentDir) close(s stageDir) {
	if s.file != nil {
		s.file.Close()
	}
	if p.file != nil {
		p.file.Close()
	}
}

// isEntry reports whether the entry name of dir, not followed, is the file
// st describes (its device and inode).
func isEntry(dir *os.File, name string, st *confine.Stat) bool {
	var now unix.Stat_t
	_, err := confine.Retry(func() (int, error) {
		return 0, unix.Fstatat(int(dir.Fd()), name, &now, unix.AT_SYMLINK_NOFOLLOW)
	})
	return err == nil && uint64(now.Dev) == uint64(st.Dev) && now.Ino == st.Ino
}

// syncDir makes a rename in the directory durable.
func syncDir(dir *os.File) error { return dir.Sync() }

// inheritReplaced opens for reading the file name of the directory dir,
// the one the rename will replace, so that what is inherited comes from
// that very file, and gives staged its owner, group and extended
// attributes (see inherit); the write or edit has just read it, so this
// needs no new permission. Nothing is inherited when there is no such file
// or it is not a regular file (one swapped in meanwhile: O_NONBLOCK and
// O_NOCTTY keep a FIFO or a terminal from blocking the open or becoming
// the process's terminal; a symlink is not followed). The file stays open
// across the rename, and release lets it go on another goroutine: its last
// reference frees its page cache and disk blocks, which took 3.7 ms of the
// rename for 10 MiB on this project's disk, and that work does not belong
// on the caller's path.
func inheritReplaced(dir *os.File, name string, staged *os.File) (release func()) {
	fd, err := confine.Retry(func() (int, error) {
		return unix.Openat(int(dir.Fd()), name, confine.ReadFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return func() {}
	}
	old := os.NewFile(uintptr(fd), name)
	var st confine.Stat
	if confine.Fstat(old, &st) != nil || !confine.IsRegular(&st) {
		old.Close()
		return func() {}
	}
	inherit(staged, int(old.Fd()), st.Uid, st.Gid)
	return func() { go old.Close() }
}

// inherit gives the staged file what the replaced file from (owned by uid
// and gid) carries besides its bytes and its mode: owner and group,
// then extended attributes (after the owner, because a change of owner
// drops security.capability). Both are best effort. What the OS refuses
// (another user's ownership, a label this process may not set, a
// filesystem without attributes) is left out, and the write goes on: a
// file would otherwise become unwritable for anyone but root.
func inherit(to *os.File, from int, uid, gid uint32) {
	if to.Chown(int(uid), int(gid)) != nil {
		to.Chown(-1, int(gid)) // the group alone may still be ours to give
	}
	raw, err := to.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) { copyXattrs(int(fd), from) })
}

// copyXattrs copies every extended attribute this process can read from
// the file from onto the file to.
func copyXattrs(to, from int) {
	list, err := xattrBytes(func(buf []byte) (int, error) { return unix.Flistxattr(from, buf) })
	if err != nil {
		return
	}
	for names := string(list); names != ""; {
		var name string
		name, names, _ = strings.Cut(names, "\x00")
		if name == "" {
			continue
		}
		value, err := xattrBytes(func(buf []byte) (int, error) { return unix.Fgetxattr(from, name, buf) })
		if err == nil {
			unix.Fsetxattr(to, name, value, 0)
		}
	}
}

// xattrBytes calls get (flistxattr or fgetxattr) for the size, then for
// the bytes, again when they grew in between (ERANGE). No attributes
// cost one call and no allocation.
func xattrBytes(get func([]byte) (int, error)) ([]byte, error) {
	for range 4 {
		n, err := get(nil)
		if err != nil || n == 0 {
			return nil, err
		}
		buf := make([]byte, n)
		n, err = get(buf)
		if err == nil {
			return buf[:n], nil
		}
		if err != unix.ERANGE {
			return nil, err
		}
	}
	return nil, unix.ERANGE
}

// lockStaging marks the staged file as in use for as long as it is open:
// an exclusive flock, which the kernel drops when the writer closes it or
// dies, however it dies, and which other processes on the host (and NFS
// clients) see. A dead owner's pid in the name would not do: pids are
// reused, and a writer in another pid namespace would look dead. An age
// bound would either remove a slow writer's files or keep a crash's for
// that long. On a filesystem without locks the staging directory stays
// unlocked, and no sweep removes it (see removeAbandoned).
func lockStaging(file *os.File) {
	if raw, err := file.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) })
	}
}

// holdSetup takes a shared lock on the directory dir for a writer that
// makes its staging directory there and locks its file; releaseSetup (or
// closing dir) releases it. A sweep judges a staging directory only under the
// exclusive lock, so it never sees one between its mkdir and its lock,
// where a live writer's looks like a crash's. A sweep holds the lock while
// it judges one entry, not while it removes it, so the wait is short; it
// is polled, so that another program holding the directory locked cannot
// keep the call past ctx. Where the lock cannot be had (a filesystem
// without locks) no sweep can have it either, and nothing is removed.
func holdSetup(ctx context.Context, dir *os.File) error {
	fd := int(dir.Fd())
	for unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) == unix.EWOULDBLOCK {
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(setupPoll)
	}
	return nil
}

// releaseSetup releases the setup lock that holdSetup took on dir.
func releaseSetup(dir *os.File) { unix.Flock(int(dir.Fd()), unix.LOCK_UN) }

// setupPoll is the pause between two tries of the setup lock: a sweep
// holds it for a few system calls.
const setupPoll = 50 * time.Microsecond

// sweep removes the abandoned staging directories of dir, a directory
// opened through its root. It returns how many it removed and how many it
// could not judge because a writer was making its staging directory at
// that moment. It reads the directory in batches and stops with ctx's
// error between them, so a huge directory cannot hold a call past its
// deadline.
func sweep(ctx context.Context, dir *os.File) (removed, busy int, err error) {
	pfd := int(dir.Fd())
	var errs []error
	for {
		if err := ctx.Err(); err != nil {
			return removed, busy, err
		}
		names, err := dir.Readdirnames(sweepBatch)
		for _, name := range names {
			if !isStagingName(name) {
				continue
			}
			switch ok, err := removeAbandoned(pfd, name); {
			case err == errSetupBusy:
				busy++
			case err != nil:
				errs = append(errs, &os.PathError{Op: "sweep", Path: filepath.Join(dir.Name(), name), Err: err})
			case ok:
				removed++
			}
		}
		if err == io.EOF {
			return removed, busy, errors.Join(errs...)
		}
		if err != nil {
			return removed, busy, err
		}
	}
}

// sweepBatch is how many names a sweep reads between checks of its
// context: a few getdents calls.
const sweepBatch = 1024

// errSetupBusy is a staging directory left unjudged: a writer held the
// setup lock (see holdSetup).
var errSetupBusy = errors.New("a writer is setting up")

// removeAbandoned removes the staging directory name in the directory
// pfd when no writer holds it, and reports whether it did. It judges
// under the exclusive setup lock of pfd (errSetupBusy when a writer holds
// it: see holdSetup), then removes without it. All of it is relative to
// directory handles, without following symlinks, so a symlink with a
// staging name never leads the sweep elsewhere. The staged file is taken
// with a shared lock, on a read-only descriptor: NFS emulates flock with
// POSIX locks, and an exclusive one needs the file open for writing. An
// entry that is not a staging directory (a file, a symlink, a directory
// with other content) is left alone.
func removeAbandoned(pfd int, name string) (bool, error) {
	if err := unix.Flock(pfd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if err == unix.EWOULDBLOCK {
			return false, errSetupBusy
		}
		return false, nil // no locks here, so no writer can be told dead
	}
	sfd, ffd, err := judge(pfd, name)
	unix.Flock(pfd, unix.LOCK_UN)
	if sfd < 0 {
		return false, err
	}
	defer unix.Close(sfd)
	if ffd >= 0 {
		defer unix.Close(ffd) // holds the shared lock until the end
		if err := unix.Unlinkat(sfd, stagedFile, 0); err != nil && err != unix.ENOENT {
			return false, err
		}
	}
	switch err := unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR); err {
	case nil:
		return true, nil
	case unix.ENOENT, unix.ENOTEMPTY, unix.EEXIST:
		return false, nil // removed by another sweep, or not ours
	default:
		return false, err
	}
}

// judge opens the staging directory name in pfd and, when it has one,
// its staged file with a shared lock. It returns -1 for the directory
// when the entry is to be left alone (with the error to report, if any),
// and -1 for the file when the directory is empty: its writer died
// before creating the file or after renaming it, or is about to remove
// the directory itself.
func judge(pfd int, name string) (sfd, ffd int, err error) {
	sfd, err = unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch err {
	case nil:
	case unix.ENOENT, unix.ENOTDIR, unix.ELOOP:
		return -1, -1, nil // gone meanwhile, or not a directory
	default:
		return -1, -1, err
	}
	ffd, err = unix.Openat(sfd, stagedFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	switch {
	case err == unix.ENOENT:
		return sfd, -1, nil
	case err != nil:
		unix.Close(sfd)
		return -1, -1, err
	case unix.Flock(ffd, unix.LOCK_SH|unix.LOCK_NB) != nil:
		unix.Close(ffd)
		unix.Close(sfd)
		return -1, -1, nil // a live writer
	}
	return sfd, ffd, nil
}
