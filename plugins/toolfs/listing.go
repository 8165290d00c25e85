package toolfs

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/gordis-run/gordis/plugins/fs"
)

// listing is a directory's children in list order: directories, then
// files, then other, each by ICU root collation (as upstream's
// localeCompare), ties in the provider's order. It holds the names back to
// back, so a directory of a million children costs their bytes and five
// more per child, not a struct and a string each. It is immutable.
type listing struct {
	names  []byte
	ends   []uint32 // where each name ends in names
	groups []uint8  // each child's group: directory, file, other
	counts ListCounts
}

// The groups, in list order.
const (
	groupDirectory uint8 = iota
	groupFile
	groupOther
)

var groupTypes = [...]fs.Type{fs.TypeDirectory, fs.TypeFile, fs.TypeOther}

func groupOf(t fs.Type) uint8 {
	switch t {
	case fs.TypeDirectory:
		return groupDirectory
	case fs.TypeFile:
		return groupFile
	}
	return groupOther // a symlink ListDir could not type, a FIFO, a device
}

func (l *listing) len() int { return len(l.ends) }

func (l *listing) name(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.names[start:l.ends[i]]
}

// entries returns the children i to j-1.
func (l *listing) entries(i, j int) []ListEntry {
	out := make([]ListEntry, 0, j-i)
	for k := i; k < j; k++ {
		out = append(out, ListEntry{Name: string(l.name(k)), Type: groupTypes[l.groups[k]]})
	}
	return out
}

// size is about what the listing holds in memory, in bytes.
func (l *listing) size() int { return len(l.names) + 5*len(l.ends) }

// listingBuilder gathers children in the provider's order.
type listingBuilder struct{ l listing }

// errTooManyNames: the names passed what a listing's offsets hold.
var errTooManyNames = errors.New("more than 4 GiB of names")

func (b *listingBuilder) add(name string, typ fs.Type) error {
	if len(b.l.names)+len(name) > math.MaxUint32 {
		return errTooManyNames
	}
	g := groupOf(typ)
	b.l.names = append(b.l.names, name...)
	b.l.ends = append(b.l.ends, uint32(len(b.l.names)))
	b.l.groups = append(b.l.groups, g)
	switch g {
	case groupDirectory:
		b.l.counts.Directories++
	case groupFile:
		b.l.counts.Files++
	default:
		b.l.counts.Other++
	}
	return nil
}

// collators pools root-locale collators: a Collator keeps per-call state and
// is not safe for concurrent use, and list runs in parallel.
var collators = sync.Pool{New: func() any { return collate.New(language.Und) }}

// sorted orders the gathered children. Sort keys are built once per name,
// far cheaper than collating inside every comparison; the original index
// breaks ties, which makes the faster unstable sort stable.
func (b *listingBuilder) sorted() *listing {
	src := &b.l
	c := collators.Get().(*collate.Collator)
	defer collators.Put(c)
	var (
		buf   collate.Buffer
		keys  keyStore
		refs  = make([]keyRef, src.len())
		order = make([]uint32, src.len())
	)
	for i := range src.len() {
		refs[i], order[i] = keys.add(c.Key(&buf, src.name(i))), uint32(i)
		buf.Reset()
	}
	slices.SortFunc(order, func(i, j uint32) int {
		if gi, gj := src.groups[i], src.groups[j]; gi != gj {
			return int(gi) - int(gj)
		}
		if c := bytes.Compare(keys.get(refs[i]), keys.get(refs[j])); c != 0 {
			return c
		}
		return int(i) - int(j)
	})
	out := &listing{
		names:  make([]byte, 0, len(src.names)),
		ends:   make([]uint32, 0, src.len()),
		groups: make([]uint8, 0, src.len()),
		counts: src.counts,
	}
	for _, i := range order {
		out.names = append(out.names, src.name(int(i))...)
		out.ends = append(out.ends, uint32(len(out.names)))
		out.groups = append(out.groups, src.groups[i])
	}
	return out
}

// keyStore holds sort keys in blocks that never move: a key is about five
// times its name (64 bytes for "f0000001.txt"), and one growing slice
// would hold, at its last doubling, the keys of a large directory three
// times over.
type keyStore struct{ blocks [][]byte }

// keyRef locates a key in a keyStore.
type keyRef struct{ block, off, n uint32 }

const keyBlock = 1 << 20

func (s *keyStore) add(key []byte) keyRef {
	last := len(s.blocks) - 1
	if last < 0 || len(s.blocks[last])+len(key) > cap(s.blocks[last]) {
		s.blocks = append(s.blocks, make([]byte, 0, max(keyBlock, len(key))))
		last++
	}
	ref := keyRef{uint32(last), uint32(len(s.blocks[last])), uint32(len(key))}
	s.blocks[last] = append(s.blocks[last], key...)
	return ref
}

func (s *keyStore) get(r keyRef) []byte { return s.blocks[r.block][r.off : r.off+r.n] }
