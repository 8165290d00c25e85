// Package fslocal is the host filesystem provider: it implements the fs seam
// (fs.FileSystem and fs.TextSeeker) on the local POSIX filesystem.
//
// The core, [New], needs no runtime; [Plugin] provides it as the "fs"
// service. Paths are displayed lexically (the spelling the caller used, made
// absolute and cleaned) and identified by their realpath ([fs.Target.Key]), so
// every alias of a file shares one version, one lock and one observation.
// All I/O goes through the key. See docs/filesystem.md for the full contract.
package fslocal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/gordis-run/gordis/plugins/fs"
)

// FS is the local provider. It is safe for concurrent use; mutations of one
// file (by key) are serialised in arrival order, reads take no lock.
type FS struct {
	cwd   string
	locks keyedMutex
}

var (
	_ fs.FileSystem = (*FS)(nil)
	_ fs.TextSeeker = (*FS)(nil)
)

// New returns a provider that resolves relative paths against cwd. An empty
// cwd means the process working directory at the time of the call. cwd is a
// resolution default, not a containment boundary: absolute paths and ".."
// reach anywhere the process may.
func New(cwd string) *FS {
	if wd, err := os.Getwd(); err == nil {
		if cwd == "" {
			cwd = wd
		} else if !filepath.IsAbs(cwd) {
			cwd = filepath.Join(wd, cwd)
		}
	}
	return &FS{cwd: filepath.Clean(cwd)}
}

// Cwd is the default directory relative paths resolve against.
func (f *FS) Cwd() string { return f.cwd }

// Resolve returns the display path and the identity key of path, relative to
// cwd (or the provider's cwd when cwd is ""). The file need not exist.
func (f *FS) Resolve(ctx context.Context, path, cwd string) (fs.Target, error) {
	if err := ctx.Err(); err != nil {
		return fs.Target{}, fs.Aborted("resolve", err)
	}
	t, err := f.resolve(path, cwd)
	if err != nil {
		return fs.Target{}, err
	}
	if err := ctx.Err(); err != nil {
		return fs.Target{}, fs.Aborted("resolve", err)
	}
	return t, nil
}

func (f *FS) resolve(path, cwd string) (fs.Target, error) {
	if fs.Blank(path) {
		return fs.Target{}, fs.Errorf(fs.CodeNotFound, "file_path must be a non-empty string")
	}
	display := f.displayPath(path, cwd)
	if strings.IndexByte(display, 0) >= 0 {
		return fs.Target{}, &fs.Error{Code: fs.CodeIO, Err: syscall.EINVAL,
			Message: `cannot resolve "` + display + `": path contains a NUL byte`}
	}
	key, err := keyOf(display)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return fs.Target{}, &fs.Error{Code: fs.CodeNotFound, Err: err,
				Message: `cannot resolve "` + display + `": a parent path segment is not a directory`}
		}
		return fs.Target{}, osError("resolve", display, err)
	}
	return fs.Target{Key: key, Path: display}, nil
}

// displayPath is the lexical absolute spelling of path: symlinks are kept,
// ".", ".." and repeated or trailing separators are collapsed.
func (f *FS) displayPath(path, cwd string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	switch {
	case cwd == "":
		cwd = f.cwd
	case !filepath.IsAbs(cwd):
		cwd = filepath.Join(f.cwd, cwd)
	}
	return filepath.Join(cwd, path)
}

// keyOf is the realpath of the existing file at path, or, when it does not
// exist, the realpath of its nearest existing ancestor joined with the
// missing suffix, so the key of a file is the same before and after it is
// created. A dangling symlink is "missing": its key is the link itself.
func keyOf(path string) (string, error) {
	suffix := ""
	for {
		real, err := realpath(path)
		if err == nil {
			return real + suffix, nil
		}
		if !errors.Is(err, syscall.ENOENT) {
			return "", err
		}
		parent := filepath.Dir(path)
		if parent == path {
			return "", err
		}
		suffix = "/" + filepath.Base(path) + suffix
		path = parent
	}
}

// maxSymlinks matches Linux's MAXSYMLINKS.
const maxSymlinks = 40

// realpath resolves every symlink in the absolute, clean path, like
// realpath(3). Errors carry the errno (ENOENT, ENOTDIR, ELOOP, EACCES...).
func realpath(path string) (string, error) {
	resolved := "/"
	rest := path
	links := 0
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(strings.TrimLeft(rest, "/"), "/")
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := joinKey(resolved, name)
		var st syscall.Stat_t
		if err := lstat(next, &st); err != nil {
			return "", err
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", &os.PathError{Op: "realpath", Path: path, Err: syscall.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = target + "/" + rest
	}
	return resolved, nil
}

// joinKey appends one name to a clean absolute directory path.
func joinKey(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// Stat follows symlinks; it returns (nil, nil) when the target is absent or
// an ancestor is not a directory.
func (f *FS) Stat(ctx context.Context, t fs.Target) (*fs.Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("stat", err)
	}
	var st syscall.Stat_t
	err := stat(t.Key, &st)
	if cerr := ctx.Err(); cerr != nil {
		return nil, fs.Aborted("stat", cerr)
	}
	if err != nil {
		if isAbsent(err) {
			return nil, nil
		}
		return nil, osError("stat", t.Path, err)
	}
	return infoOf(&st), nil
}

// Lstat reports path itself, not what a final symlink points to; nil when
// absent. The returned Target is what Resolve returns for path.
func (f *FS) Lstat(ctx context.Context, path, cwd string) (*fs.PathInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("lstat", err)
	}
	t, err := f.resolve(path, cwd)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, nil // an ancestor is a file: absent, as for Stat
		}
		return nil, err
	}
	var st syscall.Stat_t
	err = lstat(t.Path, &st)
	if cerr := ctx.Err(); cerr != nil {
		return nil, fs.Aborted("lstat", cerr)
	}
	if err != nil {
		if isAbsent(err) {
			return nil, nil
		}
		return nil, osError("lstat", t.Path, err)
	}
	info := infoOf(&st)
	if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		info.Type, info.Size = fs.TypeSymlink, -1
	}
	return &fs.PathInfo{Target: t, Info: *info}, nil
}

func infoOf(st *syscall.Stat_t) *fs.Info {
	info := &fs.Info{Version: versionOf(st), Type: typeOf(st), Size: -1}
	if info.Type == fs.TypeFile {
		info.Size = st.Size
	}
	return info
}

func typeOf(st *syscall.Stat_t) fs.Type {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return fs.TypeFile
	case syscall.S_IFDIR:
		return fs.TypeDirectory
	}
	return fs.TypeOther
}

// versionOf is the decimal "dev:ino:size:mtimeNs:ctimeNs": a rewrite changes
// it even when size and mtime are restored (new inode, new ctime).
func versionOf(st *syscall.Stat_t) fs.Version {
	b := make([]byte, 0, 96)
	b = strconv.AppendUint(b, uint64(st.Dev), 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(st.Ino), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Mtim.Nano(), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Ctim.Nano(), 10)
	return fs.Version(b)
}

// stat and lstat retry EINTR, as package os does.
func stat(path string, st *syscall.Stat_t) error {
	for {
		err := syscall.Stat(path, st)
		if err != syscall.EINTR {
			return wrapErrno("stat", path, err)
		}
	}
}

func lstat(path string, st *syscall.Stat_t) error {
	for {
		err := syscall.Lstat(path, st)
		if err != syscall.EINTR {
			return wrapErrno("lstat", path, err)
		}
	}
}

func wrapErrno(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// isAbsent reports the errors that mean "nothing there".
func isAbsent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR)
}

// osError maps an OS failure to the seam's vocabulary: EACCES and EPERM are
// FS_PERMISSION_DENIED, anything else FS_IO_ERROR, both as
// `cannot <verb> "<path>": <reason>` with the cause kept in Err.
func osError(verb, path string, err error) *fs.Error {
	code := fs.CodeIO
	var errno syscall.Errno
	reason := "input/output error"
	if errors.As(err, &errno) {
		reason = errno.Error()
		if errno == syscall.EACCES || errno == syscall.EPERM {
			code = fs.CodePermission
		}
	}
	return &fs.Error{Code: code, Message: "cannot " + verb + ` "` + path + `": ` + reason, Err: err}
}

// notFound and notRegular are the type failures shared by read, write, edit.
func notFound(verb, path string) *fs.Error {
	return fs.Errorf(fs.CodeNotFound, `cannot %s "%s": not found`, verb, path)
}

func notRegular(verb, path string) *fs.Error {
	return fs.Errorf(fs.CodeNotRegularFile, `cannot %s "%s": not a regular file`, verb, path)
}
