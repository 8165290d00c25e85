//go:build unix

package fslocal

import (
	"os"
	"syscall"
)

// canMap reports whether scans may map files: one of the measured methods.
const canMap = true

// mapRange maps file[from:to) read-only from the page holding from, which
// is off bytes into the mapping.
func mapRange(file *os.File, from, to int64) (m []byte, off int64, err error) {
	base := from &^ int64(os.Getpagesize()-1)
	raw, err := file.SyscallConn()
	if err != nil {
		return nil, 0, err
	}
	if cerr := raw.Control(func(fd uintptr) {
		m, err = syscall.Mmap(int(fd), base, int(to-base), syscall.PROT_READ, syscall.MAP_SHARED)
	}); cerr != nil {
		return nil, 0, cerr
	}
	return m, from - base, err
}

func unmap(m []byte) { syscall.Munmap(m) }
