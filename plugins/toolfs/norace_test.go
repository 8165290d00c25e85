//go:build !race

package toolfs_test

const raceEnabled = false
