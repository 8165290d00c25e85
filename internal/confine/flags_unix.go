//go:build unix

package confine

import "syscall"

const (
	// ReadFlags open a file for reading without blocking on a FIFO
	// that replaced it, and without making a terminal the controlling one.
	ReadFlags = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	// DirFlags open a directory for listing, and only a directory.
	DirFlags = ReadFlags | syscall.O_DIRECTORY
)
