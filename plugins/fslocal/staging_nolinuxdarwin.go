//go:build !linux && !darwin

package fslocal

import (
	"context"
	"os"
)

// On other systems the staging directories are neither locked nor swept
// (a sweep cannot tell a live writer's from a dead one's), a replacement
// keeps neither owner nor extended attributes, and a read-only target is
// left for the rename to refuse. The staged file is closed before the
// rename, which Windows refuses for an open file.

const stagingLocked = false

func writable(*os.File, string) error { return nil }

func inheritReplaced(*root, string, *os.File) (release func()) { return func() {} }

func lockStaging(*os.File) {}

func holdSetup(context.Context, *os.File) error { return nil }

func sweep(context.Context, *os.File) (removed, busy int, err error) { return 0, 0, nil }
