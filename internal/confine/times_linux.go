package confine

// Times are the modification and status-change times, in nanoseconds.
func Times(st *Stat) (mtime, ctime int64) { return st.Mtim.Nano(), st.Ctim.Nano() }
