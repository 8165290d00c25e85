//go:build !linux

package fslocal

import (
	"errors"
	"os"
)

// statBeneath and openBeneath resolve through os.Root, which refuses every
// name that leaves it.
func (r *root) statBeneath(name string, st *fileStat) error { return r.statRoot(name, st) }

func (r *root) openBeneath(name string, flag int, perm os.FileMode) (*os.File, error) {
	return r.dir.OpenFile(name, flag, perm)
}

// statChild is not available here: ListDir stats every child by the root.
func statChild(*os.File, string, *fileStat) error { return errors.ErrUnsupported }
