package fslocal

// times are the modification and status-change times, in nanoseconds.
func times(st *fileStat) (mtime, ctime int64) { return st.Mtim.Nano(), st.Ctim.Nano() }
