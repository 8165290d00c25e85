// Package extsort orders a stream of names by their bytes in bounded
// memory: a directory of a million entries must be listed in order
// without holding a million names. A Sorter holds names up to a budget;
// past it, it sorts what it holds, appends it to a temporary file as one
// run, and starts again; reading back merges the runs.
package extsort

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
)

// Record is one name with a byte of its owner's (a directory entry's
// type).
type Record struct {
	Name string
	Tag  byte
}

// A Sorter collects records, then yields them in the order of their
// names' bytes. Its memory is its budget plus a read buffer per run when
// reading back. It is not safe for concurrent use.
type Sorter struct {
	budget int
	arena  []byte // the held names, back to back
	held   []span
	spill  *os.File // nil until the first run
	runs   []run
	w      *bufio.Writer
	end    int64 // bytes written to spill
}

type span struct {
	off, n uint32
	tag    byte
}

type run struct{ off, n int64 }

// New returns a Sorter that holds up to budget bytes of names (and some
// bytes per name) before it spills.
func New(budget int) *Sorter { return &Sorter{budget: budget} }

// perRecord is what a held record costs beside its name's bytes.
const perRecord = 12

// Add takes one record.
func (s *Sorter) Add(name string, tag byte) error {
	if len(s.arena)+len(s.held)*perRecord >= s.budget && len(s.held) > 0 {
		if err := s.flush(); err != nil {
			return err
		}
	}
	s.held = append(s.held, span{off: uint32(len(s.arena)), n: uint32(len(name)), tag: tag})
	s.arena = append(s.arena, name...)
	return nil
}

// Spilled reports whether the records passed the budget.
func (s *Sorter) Spilled() bool { return s.spill != nil }

func (s *Sorter) name(sp span) []byte { return s.arena[sp.off : sp.off+sp.n] }

func (s *Sorter) sortHeld() {
	slices.SortFunc(s.held, func(a, b span) int { return bytes.Compare(s.name(a), s.name(b)) })
}

// flush writes the held records, sorted, as one run: a uvarint length,
// the name and the tag per record.
func (s *Sorter) flush() error {
	if s.spill == nil {
		f, err := createTemp()
		if err != nil {
			return err
		}
		s.spill, s.w = f, bufio.NewWriterSize(f, 64<<10)
	}
	s.sortHeld()
	start := s.end
	var hdr [binary.MaxVarintLen64]byte
	for _, sp := range s.held {
		n := binary.PutUvarint(hdr[:], uint64(sp.n))
		s.w.Write(hdr[:n])
		s.w.Write(s.name(sp))
		s.w.WriteByte(sp.tag)
		s.end += int64(n) + int64(sp.n) + 1
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	s.runs = append(s.runs, run{start, s.end - start})
	s.arena, s.held = s.arena[:0], s.held[:0]
	return nil
}

// Sorted ends the adding and returns the records in order; the Sorter's
// Close releases them.
func (s *Sorter) Sorted() (*Iter, error) {
	if s.spill == nil {
		s.sortHeld()
		return &Iter{s: s}, nil
	}
	if len(s.held) > 0 {
		if err := s.flush(); err != nil {
			return nil, err
		}
	}
	s.arena, s.held = nil, nil // the runs are on file now
	it := &Iter{s: s}
	for _, r := range s.runs {
		c := &cursor{r: bufio.NewReaderSize(io.NewSectionReader(s.spill, r.off, r.n), readBuf)}
		if ok, err := c.next(); err != nil {
			return nil, err
		} else if ok {
			it.merge = append(it.merge, c)
		}
	}
	heap.Init(&it.merge)
	return it, nil
}

// readBuf is each run's read buffer while merging.
const readBuf = 16 << 10

// Close removes the temporary file, if any.
func (s *Sorter) Close() error {
	if s.spill == nil {
		return nil
	}
	f := s.spill
	s.spill = nil
	return errors.Join(f.Close(), removeTemp(f))
}

// Iter yields the records of a Sorter in order.
type Iter struct {
	s     *Sorter
	i     int // next held record, when nothing spilled
	merge cursors
}

// Next returns the next record, or false at the end.
func (it *Iter) Next() (Record, bool, error) {
	if it.s.spill == nil {
		if it.i >= len(it.s.held) {
			return Record{}, false, nil
		}
		sp := it.s.held[it.i]
		it.i++
		return Record{Name: string(it.s.name(sp)), Tag: sp.tag}, true, nil
	}
	if len(it.merge) == 0 {
		return Record{}, false, nil
	}
	c := it.merge[0]
	rec := Record{Name: string(c.name), Tag: c.tag}
	ok, err := c.next()
	switch {
	case err != nil:
		return Record{}, false, err
	case ok:
		heap.Fix(&it.merge, 0)
	default:
		heap.Pop(&it.merge)
	}
	return rec, true, nil
}

// cursor is one run being merged, at its current record.
type cursor struct {
	r    *bufio.Reader
	name []byte
	tag  byte
}

func (c *cursor) next() (bool, error) {
	n, err := binary.ReadUvarint(c.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.name = slices.Grow(c.name[:0], int(n))[:n]
	if _, err := io.ReadFull(c.r, c.name); err != nil {
		return false, err
	}
	c.tag, err = c.r.ReadByte()
	return true, err
}

type cursors []*cursor

func (h cursors) Len() int           { return len(h) }
func (h cursors) Less(i, j int) bool { return bytes.Compare(h[i].name, h[j].name) < 0 }
func (h cursors) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

func createTemp() (*os.File, error) {
	f, err := os.CreateTemp("", "gordis-sort-*")
	if err != nil {
		return nil, err
	}
	if runtime.GOOS != "windows" {
		// Unlinked at once, so that nothing is left behind whatever
		// happens to the process; Windows cannot remove an open file.
		os.Remove(f.Name())
	}
	return f, nil
}

func removeTemp(f *os.File) error {
	if runtime.GOOS == "windows" {
		return os.Remove(f.Name())
	}
	return nil
}
