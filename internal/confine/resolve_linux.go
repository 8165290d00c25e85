package confine

import "golang.org/x/sys/unix"

// dirOpenFlags open a directory only as a place to resolve names in:
// O_PATH needs no read permission and has no side effects.
const dirOpenFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC
