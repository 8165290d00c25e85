//go:build !linux && !darwin

package fslocal

import (
	"strconv"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

// versionOf is the decimal "size:mtimeNs:birthNs": a replacement is a new
// file, with its own creation time, even when size and mtime are restored.
func versionOf(st *confine.Stat) fs.Version {
	b := make([]byte, 0, 64)
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Mtime, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Birth, 10)
	return fs.Version(b)
}
