//go:build linux || darwin

package fslocal

import (
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// fileStat is the platform's stat: everything the provider reads of a file
// in one system call.
type fileStat = syscall.Stat_t

// statPath and lstatPath retry EINTR, as package os does.
func statPath(path string, st *fileStat) error {
	for {
		err := syscall.Stat(path, st)
		if err != syscall.EINTR {
			return wrapErrno("stat", path, err)
		}
	}
}

func lstatPath(path string, st *fileStat) error {
	for {
		err := syscall.Lstat(path, st)
		if err != syscall.EINTR {
			return wrapErrno("lstat", path, err)
		}
	}
}

func fstat(file *os.File, st *fileStat) error {
	raw, err := file.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		for {
			if serr = syscall.Fstat(int(fd), st); serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return wrapErrno("fstat", file.Name(), serr)
}

func wrapErrno(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// fillStat copies the stat behind fi, as package os made it.
func fillStat(fi os.FileInfo, st *fileStat) { *st = *fi.Sys().(*syscall.Stat_t) }

func typeOf(st *fileStat) fs.Type {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return fs.TypeFile
	case syscall.S_IFDIR:
		return fs.TypeDirectory
	}
	return fs.TypeOther
}

// modTime is the modification time st reports.
func modTime(st *fileStat) time.Time {
	mtime, _ := times(st)
	return time.Unix(0, mtime)
}

func isRegular(st *fileStat) bool { return st.Mode&syscall.S_IFMT == syscall.S_IFREG }

func isSymlink(st *fileStat) bool { return st.Mode&syscall.S_IFMT == syscall.S_IFLNK }

// permOf is the permission bits a replacement keeps.
func permOf(st *fileStat) uint32 { return uint32(st.Mode) & 0o777 }

// versionOf is the decimal "dev:ino:size:mtimeNs:ctimeNs": a rewrite changes
// it even when size and mtime are restored (new inode, new ctime).
func versionOf(st *fileStat) fs.Version {
	mtime, ctime := times(st)
	b := make([]byte, 0, 96)
	b = strconv.AppendUint(b, uint64(st.Dev), 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(st.Ino), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, mtime, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, ctime, 10)
	return fs.Version(b)
}
