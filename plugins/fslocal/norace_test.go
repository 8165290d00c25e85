//go:build !race

package fslocal

const raceEnabled = false
