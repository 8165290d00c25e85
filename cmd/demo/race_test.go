//go:build race

package main

// raceEnabled: the race detector multiplies a process's memory, so peak
// memory checks do not apply.
const raceEnabled = true
