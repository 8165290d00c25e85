//go:build unix && !linux

package confine

import "golang.org/x/sys/unix"

// dirOpenFlags open a directory to resolve names in (without O_PATH, a
// directory must be readable to resolve names in it).
const dirOpenFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
