//go:build race

package rustregex

func init() { raceEnabled = true }
