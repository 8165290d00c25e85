//go:build !unix

package fslocal

import (
	"errors"
	"os"
)

// canMap reports whether scans may map files: here they always read.
const canMap = false

func mapRange(*os.File, int64, int64) ([]byte, int64, error) { return nil, 0, errors.ErrUnsupported }

func unmap([]byte) {}
