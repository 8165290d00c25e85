//go:build race

package toolfs_test

// raceEnabled: the race detector multiplies a process's memory, so peak
// memory checks do not apply.
const raceEnabled = true
