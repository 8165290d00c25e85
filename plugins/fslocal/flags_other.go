//go:build !unix

package fslocal

import "os"

const (
	// openReadFlags open a file for reading.
	openReadFlags = os.O_RDONLY
	// openDirFlags open a directory for listing.
	openDirFlags = os.O_RDONLY
)
