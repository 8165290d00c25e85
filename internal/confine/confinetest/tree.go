package confinetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// A Tree is what a directory holds, by name relative to it: for a regular
// file its content and its identity (a replacement with equal content is a
// change too), for a symlink its target, for a directory "dir".
type Tree map[string]string

// Snapshot reads the tree under dir.
func Snapshot(tb testing.TB, dir string) Tree {
	tb.Helper()
	tree := Tree{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			tree[rel] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			tree[rel] = "link to " + target
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			tree[rel] = "file " + strconv.FormatUint(inode(info), 10) + " " + strconv.Quote(string(data))
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return tree
}

// Diff returns the names whose entry changed between t and later, those
// later added and those it lost, each sorted.
func (t Tree) Diff(later Tree) (changed, added, lost []string) {
	for name, was := range t {
		switch now, ok := later[name]; {
		case !ok:
			lost = append(lost, name)
		case now != was:
			changed = append(changed, name)
		}
	}
	for name := range later {
		if _, ok := t[name]; !ok {
			added = append(added, name)
		}
	}
	slices.Sort(changed)
	slices.Sort(added)
	slices.Sort(lost)
	return changed, added, lost
}
