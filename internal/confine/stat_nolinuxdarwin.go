//go:build !linux && !darwin

package confine

import (
	"os"
	"time"
)

// Stat is what the provider reads of a file, from os.FileInfo where the
// platform's stat has no portable shape.
type Stat struct {
	Mode  os.FileMode
	Size  int64
	Mtime int64 // modification time, ns
	Birth int64 // creation time, ns, where the platform keeps one (else 0)
}

func statPath(path string, st *Stat) error { return statWith(os.Stat, path, st) }

func lstatPath(path string, st *Stat) error { return statWith(os.Lstat, path, st) }

func statWith(stat func(string) (os.FileInfo, error), path string, st *Stat) error {
	fi, err := stat(path)
	if err != nil {
		return err
	}
	fillStat(fi, st)
	return nil
}

// Fstat stats the open file into st.
func Fstat(file *os.File, st *Stat) error {
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	fillStat(fi, st)
	return nil
}

func fillStat(fi os.FileInfo, st *Stat) {
	*st = Stat{Mode: fi.Mode(), Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Birth: birthNs(fi)}
}

// ModTime is the modification time st reports.
func ModTime(st *Stat) time.Time { return time.Unix(0, st.Mtime) }

// IsRegular, IsDir and IsSymlink report the type of file st describes.
func IsRegular(st *Stat) bool { return st.Mode.IsRegular() }

func IsDir(st *Stat) bool { return st.Mode.IsDir() }

func IsSymlink(st *Stat) bool { return st.Mode&os.ModeSymlink != 0 }

// Perm is the permission bits of st.
func Perm(st *Stat) uint32 { return uint32(st.Mode.Perm()) }
