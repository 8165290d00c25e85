//go:build !unix

package fslocal

import (
	"errors"
	"os"
)

// mapRange fails: the scan reads every chunk instead.
func mapRange(*os.File, int64, int64) ([]byte, int64, error) {
	return nil, 0, errors.ErrUnsupported
}

func unmap([]byte) {}
