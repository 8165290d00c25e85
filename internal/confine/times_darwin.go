package confine

import "syscall"

// Times are the modification and status-change times, in nanoseconds.
func Times(st *Stat) (mtime, ctime int64) { return st.Mtimespec.Nano(), st.Ctimespec.Nano() }

// mtimespec is the modification time as the kernel gives it.
func mtimespec(st *Stat) syscall.Timespec { return st.Mtimespec }
