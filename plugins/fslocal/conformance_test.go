package fslocal

import (
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fs/fstest"
)

func TestConformance(t *testing.T) {
	fstest.TestFileSystem(t, func(t *testing.T, root string) fs.FileSystem { return New(root) })
}
