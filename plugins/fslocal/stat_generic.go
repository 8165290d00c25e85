//go:build !linux && !darwin

package fslocal

import (
	"os"
	"strconv"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// fileStat is what the provider reads of a file, from os.FileInfo where the
// platform's stat has no portable shape.
type fileStat struct {
	Mode  os.FileMode
	Size  int64
	mtime int64 // modification time, ns
	birth int64 // creation time, ns, where the platform keeps one (else 0)
}

func statPath(path string, st *fileStat) error { return statWith(os.Stat, path, st) }

func lstatPath(path string, st *fileStat) error { return statWith(os.Lstat, path, st) }

func statWith(stat func(string) (os.FileInfo, error), path string, st *fileStat) error {
	fi, err := stat(path)
	if err != nil {
		return err
	}
	fillStat(fi, st)
	return nil
}

func fstat(file *os.File, st *fileStat) error {
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	fillStat(fi, st)
	return nil
}

func fillStat(fi os.FileInfo, st *fileStat) {
	*st = fileStat{Mode: fi.Mode(), Size: fi.Size(), mtime: fi.ModTime().UnixNano(), birth: birthNs(fi)}
}

func typeOf(st *fileStat) fs.Type {
	switch {
	case st.Mode.IsRegular():
		return fs.TypeFile
	case st.Mode.IsDir():
		return fs.TypeDirectory
	}
	return fs.TypeOther
}

// modTime is the modification time st reports.
func modTime(st *fileStat) time.Time { return time.Unix(0, st.mtime) }

func isRegular(st *fileStat) bool { return st.Mode.IsRegular() }

func isSymlink(st *fileStat) bool { return st.Mode&os.ModeSymlink != 0 }

// permOf is the permission bits a replacement keeps.
func permOf(st *fileStat) uint32 { return uint32(st.Mode.Perm()) }

// versionOf is the decimal "size:mtimeNs:birthNs": a replacement is a new
// file, with its own creation time, even when size and mtime are restored.
func versionOf(st *fileStat) fs.Version {
	b := make([]byte, 0, 64)
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.mtime, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.birth, 10)
	return fs.Version(b)
}
