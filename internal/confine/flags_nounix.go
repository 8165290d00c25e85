//go:build !unix

package confine

import "os"

const (
	// ReadFlags open a file for reading.
	ReadFlags = os.O_RDONLY
	// DirFlags open a directory for listing.
	DirFlags = os.O_RDONLY
)
