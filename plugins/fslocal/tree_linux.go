package fslocal

import (
	"bytes"
	"io"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

// treeDir is a directory of a walk by its descriptor; file holds the
// target's, which its root opened.
type treeDir struct {
	fd   int
	file *os.File
}

// listBufs hold the buffers of getdents, a few hundred names each.
var listBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (w *treeWalk) openTop() (*treeDir, error) {
	file, err := w.root.open(w.name, confine.DirFlags, 0)
	if err != nil {
		return nil, err
	}
	return &treeDir{fd: int(file.Fd()), file: file}, nil
}

// enter opens the child directory name relative to dir; a symlink there
// fails with ELOOP, anything else with ENOTDIR.
func (w *treeWalk) enter(dir *treeDir, name string) (*treeDir, error) {
	fd, err := confine.Retry(func() (int, error) {
		return unix.Openat(dir.fd, name, confine.DirFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: name, Err: err}
	}
	return &treeDir{fd: fd}, nil
}

func (w *treeWalk) close(dir *treeDir) {
	if dir.file != nil {
		dir.file.Close()
	} else {
		unix.Close(dir.fd)
	}
	dir.fd = -1
}

// read lists dir with getdents: names and types come from the directory
// itself, and only an entry the filesystem does not type (DT_UNKNOWN) is
// stat'ed. The names of one getdents read share one string, so a listing
// held whole holds its names and a dirent per name, and allocates little
// more.
func (w *treeWalk) read(dir *treeDir) (*dirList, error) {
	buf := listBufs.Get().(*[]byte)
	defer listBufs.Put(buf)
	var (
		c     collector
		batch []byte // the names of one read, then copied to a string
		ends  []int  // where each name of batch ends
		types []fs.Type
	)
	for {
		if err := w.ctx.Err(); err != nil {
			c.abandon()
			return nil, err
		}
		n, err := confine.Retry(func() (int, error) { return unix.Getdents(dir.fd, *buf) })
		if err != nil {
			c.abandon()
			return nil, &os.PathError{Op: "getdents", Path: ".", Err: err}
		}
		if n == 0 {
			break
		}
		batch, ends, types = batch[:0], ends[:0], types[:0]
		for b := (*buf)[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			typ, name := b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) == "." || string(name) == ".." {
				continue
			}
			batch = append(batch, name...)
			ends = append(ends, len(batch))
			types = append(types, direntType(typ))
		}
		names, start := string(batch), 0
		for i, end := range ends {
			name, typ := names[start:end], types[i]
			start = end
			if typ == "" {
				var st confine.Stat
				if err := w.lstat(dir, name, &st); err != nil {
					c.abandon()
					return nil, err
				}
				typ = lstatType(&st)
			}
			if err := c.add(name, typ); err != nil {
				c.abandon()
				return nil, err
			}
		}
	}
	return c.list()
}

// direntType is the type a d_type says; "" when the filesystem left it
// unknown.
func direntType(t uint8) fs.Type {
	switch t {
	case unix.DT_REG:
		return fs.TypeFile
	case unix.DT_DIR:
		return fs.TypeDirectory
	case unix.DT_LNK:
		return fs.TypeSymlink
	case unix.DT_UNKNOWN:
		return ""
	}
	return fs.TypeOther
}

// lstatType is the type of what st describes, a symlink not followed.
func lstatType(st *confine.Stat) fs.Type {
	if confine.IsSymlink(st) {
		return fs.TypeSymlink
	}
	return typeOf(st)
}

func (w *treeWalk) lstat(dir *treeDir, name string, st *confine.Stat) error {
	return confine.LstatAt(dir.fd, name, st)
}

// openFile opens the regular file at name (the root's name for it) without
// following any symlink (see confine.Root.OpenNoSymlinks), and reads it by
// its descriptor.
func (w *treeWalk) openFile(name string) (*sizedFile, error) {
	fd, err := w.root.dir.OpenNoSymlinks(name, confine.ReadFlags)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if _, err := confine.Retry(func() (int, error) { return 0, unix.Fstat(fd, &st) }); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, errNotRegular
	}
	return &sizedFile{r: &rawFile{fd: fd}, left: st.Size}, nil
}

// rawFile reads a descriptor with read(2) and closes it once.
type rawFile struct{ fd int }

func (f *rawFile) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(f.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: ".", Err: err}
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *rawFile) Close() error {
	if f.fd < 0 {
		return os.ErrClosed
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}
