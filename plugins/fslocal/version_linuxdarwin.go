//go:build linux || darwin

package fslocal

import (
	"strconv"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

// versionOf is the decimal "dev:ino:size:mtimeNs:ctimeNs": a rewrite changes
// it even when size and mtime are restored (new inode, new ctime).
func versionOf(st *confine.Stat) fs.Version {
	mtime, ctime := confine.Times(st)
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
