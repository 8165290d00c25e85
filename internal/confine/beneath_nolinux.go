//go:build !linux

package confine

import (
	"errors"
	"os"
)

// statBeneath and openBeneath resolve through os.Root, which refuses every
// name that leaves it.
func (r *Root) statBeneath(name string, st *Stat) error { return r.statRoot(name, st) }

func (r *Root) openBeneath(name string, flag int, perm os.FileMode) (*os.File, error) {
	return r.dir.OpenFile(name, flag, perm)
}

// LstatAt is not available here: ListDir stats every child by the root.
func LstatAt(int, string, *Stat) error { return errors.ErrUnsupported }
