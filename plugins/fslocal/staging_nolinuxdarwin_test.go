//go:build !linux && !darwin

package fslocal

import "testing"

// holdStaging needs no lock here: nothing sweeps a staging directory.
func holdStaging(*testing.T, string) {}
