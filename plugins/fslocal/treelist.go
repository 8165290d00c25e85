package fslocal

import (
	"slices"
	"strings"

	"github.com/gordis-run/gordis/internal/extsort"
	"github.com/gordis-run/gordis/plugins/fs"
)

// A walk holds up to maxHeld entries of a directory as one sorted slice.
// A larger directory's entries go through an external sort, which holds
// sortBudget bytes of them and spills the rest to a temporary file, and
// the walk takes them back maxHeld at a time: a directory of a million
// entries costs a walk about as much memory as one of maxHeld.
const (
	maxHeld    = 16 << 10
	sortBudget = 1 << 20
)

// dirList is a directory's listing, sorted by the bytes of its names,
// staging directories left out: all of it in ents, or, for a large
// directory, a window of it, the rest to come from sorted.
type dirList struct {
	ents   []dirent
	sorter *extsort.Sorter // nil for a listing held whole
	sorted *extsort.Iter
}

// next replaces ents by the listing's next window; false at its end.
func (l *dirList) next() (bool, error) {
	if l.sorted == nil {
		return false, nil
	}
	l.ents = l.ents[:0]
	for len(l.ents) < maxHeld {
		r, ok, err := l.sorted.Next()
		if err != nil {
			return false, err
		}
		if !ok {
			break
		}
		l.ents = append(l.ents, dirent{name: r.Name, typ: entryTypes[r.Tag]})
	}
	return len(l.ents) > 0, nil
}

// close removes a large listing's temporary file.
func (l *dirList) close() {
	if l.sorter != nil {
		l.sorter.Close()
	}
}

// entryTypes are the types a listing spills, by their tag.
var entryTypes = [...]fs.Type{fs.TypeFile, fs.TypeDirectory, fs.TypeSymlink, fs.TypeOther}

func tagOf(t fs.Type) byte {
	return byte(slices.Index(entryTypes[:], t))
}

// collector gathers a directory's entries as they are read.
type collector struct {
	ents   []dirent
	sorter *extsort.Sorter
}

// add takes the entry name of type typ; name may share its storage with
// other names.
func (c *collector) add(name string, typ fs.Type) error {
	if typ == fs.TypeDirectory && isStagingName(name) {
		return nil
	}
	if c.sorter == nil {
		if len(c.ents) < maxHeld {
			if len(c.ents) == cap(c.ents) { // doubling: append's 1.25 would copy a long listing ~5 times
				c.ents = slices.Grow(c.ents, max(len(c.ents), 64))
			}
			c.ents = append(c.ents, dirent{name: name, typ: typ})
			return nil
		}
		c.sorter = extsort.New(sortBudget)
		for _, d := range c.ents {
			if err := c.sorter.Add(d.name, tagOf(d.typ)); err != nil {
				return err
			}
		}
		c.ents = c.ents[:0]
	}
	return c.sorter.Add(name, tagOf(typ))
}

// list ends the gathering: the sorted listing, or its first window.
func (c *collector) list() (*dirList, error) {
	if c.sorter == nil {
		slices.SortFunc(c.ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
		return &dirList{ents: c.ents}, nil
	}
	l := &dirList{ents: c.ents, sorter: c.sorter}
	var err error
	if l.sorted, err = c.sorter.Sorted(); err == nil {
		_, err = l.next()
	}
	if err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// abandon releases what a failed read gathered.
func (c *collector) abandon() {
	if c.sorter != nil {
		c.sorter.Close()
	}
}
