//go:build unix

package confinetest

import (
	"io/fs"
	"syscall"
)

// inode is the file's inode number.
func inode(info fs.FileInfo) uint64 { return info.Sys().(*syscall.Stat_t).Ino }
