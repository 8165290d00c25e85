//go:build linux || darwin

package fslocal

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// writable reports, as open(O_WRONLY) would decide it (effective ids,
// ACLs, root's override, a read-only mount), whether this process may
// write the file at path, without opening it: an open for writing is seen
// by file watchers (a close after writing) and breaks others' leases.
func writable(path string) error {
	return wrapErrno("access", path, unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS))
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
// unlocked, and no sweep removes it.
//
// A sweep may take the file in the moment between its creation and this
// lock: then the lock is taken (EWOULDBLOCK) or the file is already
// unlinked (ENOENT), and the writer starts over.
func lockStaging(file *os.File) error {
	raw, err := file.SyscallConn()
	if err != nil {
		return nil
	}
	var lockErr error
	var st syscall.Stat_t
	raw.Control(func(fd uintptr) {
		if lockErr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB); lockErr == nil {
			lockErr = syscall.Fstat(int(fd), &st)
		}
	})
	switch {
	case lockErr == unix.EWOULDBLOCK:
		return &os.PathError{Op: "flock", Path: file.Name(), Err: lockErr}
	case lockErr != nil:
		return nil
	case st.Nlink == 0:
		return &os.PathError{Op: "flock", Path: file.Name(), Err: syscall.ENOENT}
	}
	return nil
}

// sweep removes dir's abandoned staging directories; it returns how many.
// It reads the directory in batches and stops with ctx's error between
// them, so a huge directory cannot hold a call past its deadline.
func sweep(ctx context.Context, dir string) (int, error) {
	parent, err := os.Open(dir)
	if err != nil {
		if isAbsent(err) {
			return 0, nil
		}
		return 0, err
	}
	defer parent.Close()
	pfd := int(parent.Fd())
	removed := 0
	var errs []error
	for {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		names, err := parent.Readdirnames(sweepBatch)
		for _, name := range names {
			if !isStagingName(name) {
				continue
			}
			switch ok, err := removeAbandoned(pfd, name); {
			case err != nil:
				errs = append(errs, &os.PathError{Op: "sweep", Path: dir + "/" + name, Err: err})
			case ok:
				removed++
			}
		}
		if err == io.EOF {
			return removed, errors.Join(errs...)
		}
		if err != nil {
			return removed, err
		}
	}
}

// sweepBatch is how many names a sweep reads between checks of its
// context: a few getdents calls.
const sweepBatch = 1024

// removeAbandoned removes the staging directory name in the directory
// pfd when no writer holds it, and reports whether it did. All of it is
// relative to directory handles, without following symlinks, so a
// symlink with a staging name never leads the sweep elsewhere. The
// staged file is unlinked under a shared lock, which a writer that
// created it a moment ago cannot take over: it then finds its file
// unlinked and starts again (see lockStaging). Shared, because it is
// taken on a read-only descriptor: NFS emulates flock with POSIX locks,
// and an exclusive one needs the file open for writing. An entry that is not a
// staging directory (a file, a symlink, a directory with other content)
// is left alone.
func removeAbandoned(pfd int, name string) (bool, error) {
	sfd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch err {
	case nil:
	case unix.ENOENT, unix.ENOTDIR, unix.ELOOP:
		return false, nil // gone meanwhile, or not a directory
	default:
		return false, err
	}
	defer unix.Close(sfd)
	ffd, err := unix.Openat(sfd, stagedFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	switch err {
	case nil:
		defer unix.Close(ffd)
		if unix.Flock(ffd, unix.LOCK_SH|unix.LOCK_NB) != nil {
			return false, nil // a live writer
		}
		if err := unix.Unlinkat(sfd, stagedFile, 0); err != nil && err != unix.ENOENT {
			return false, err
		}
	case unix.ENOENT:
		// Empty: a writer died before creating its file or after its
		// rename, or is between its mkdir and its create, and then finds
		// its directory gone and starts again.
	default:
		return false, err
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
