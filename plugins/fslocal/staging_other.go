//go:build !linux && !darwin

package fslocal

import (
	"context"
	"os"
)

// On other systems the staging directories are neither locked nor swept
// (a sweep cannot tell a live writer's from a dead one's), a replacement
// keeps neither owner nor extended attributes, and a read-only target is
// left for the rename to refuse.

func writable(string) error { return nil }

func inherit(*os.File, int, uint32, uint32) {}

func lockStaging(*os.File) {}

func holdSetup(context.Context, string) (int, error) { return -1, nil }

func releaseSetup(int) {}

func sweep(context.Context, string) (removed, busy int, err error) { return 0, 0, nil }
