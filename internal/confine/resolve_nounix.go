//go:build !unix

package confine

import "os"

// openResolver resolves by names through the root's os.Root.
func openResolver(r *Root) (resolver, error) { return pathResolver{&r.tree, rootLooker{r.dir}}, nil }

// rootLooker looks names up through a Root's os.Root.
type rootLooker struct{ dir *os.Root }

func (l rootLooker) lstat(name string, st *Stat) error {
	fi, err := l.dir.Lstat(name)
	if err != nil {
		return err
	}
	fillStat(fi, st)
	return nil
}

func (l rootLooker) readlink(name string) (string, error) { return l.dir.Readlink(name) }
