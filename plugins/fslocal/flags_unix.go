//go:build unix

package fslocal

import "syscall"

const (
	// openReadFlags open a file for reading without blocking on a FIFO
	// that replaced it, and without making a terminal the controlling one.
	openReadFlags = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	// openDirFlags open a directory for listing, and only a directory.
	openDirFlags = openReadFlags | syscall.O_DIRECTORY
)
