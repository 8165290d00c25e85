package toolfs

import (
	"container/list"
	"sync"

	"github.com/gordis-run/gordis/plugins/fs"
)

// Line-index tuning: a full scan records where every indexStride-th line
// starts; past maxIndexEntries the stride doubles, so one index never holds
// more than maxIndexEntries offsets (64 KiB) whatever the file.
const (
	indexStride     = 4096
	maxIndexEntries = 8192
	cachedIndexes   = 8
)

// indexBuilder records line start offsets during a full scan.
type indexBuilder struct {
	stride  int
	offsets []int64 // offsets[k] is where line k*stride+1 starts
}

func newIndexBuilder() *indexBuilder { return &indexBuilder{stride: indexStride} }

// next is the first recorded line number after line.
func (b *indexBuilder) next(line int) int { return ((line-1)/b.stride+1)*b.stride + 1 }

// mark notes that line starts at pos; lines arrive in increasing order.
func (b *indexBuilder) mark(line int, pos int64) {
	if (line-1)%b.stride != 0 || (line-1)/b.stride != len(b.offsets) {
		return
	}
	b.offsets = append(b.offsets, pos)
	if len(b.offsets) > maxIndexEntries {
		kept := b.offsets[:0]
		for k := 0; k < len(b.offsets); k += 2 {
			kept = append(kept, b.offsets[k])
		}
		b.offsets, b.stride = kept, b.stride*2
	}
}

func (b *indexBuilder) freeze(total int) *lineIndex {
	return &lineIndex{total: total, stride: b.stride, offsets: b.offsets}
}

// lineIndex is what a completed scan knows about one version of a file: its
// exact line count and a sparse map of line starts. It is immutable.
type lineIndex struct {
	total   int
	stride  int
	offsets []int64
}

// start is the closest recorded line at or before line, and its offset.
func (x *lineIndex) start(line int) (int, int64) {
	k := min((line-1)/x.stride, len(x.offsets)-1)
	return k*x.stride + 1, x.offsets[k]
}

type cacheKey struct {
	target  string
	version fs.Version
}

// lineCache keeps the indexes of the most recently read large files, keyed by
// target identity and version, so a changed file is never served from it.
type lineCache struct {
	mu    sync.Mutex
	order *list.List // of *cacheItem, most recent first
	items map[cacheKey]*list.Element
}

type cacheItem struct {
	key   cacheKey
	index *lineIndex
}

func newLineCache() *lineCache {
	return &lineCache{order: list.New(), items: make(map[cacheKey]*list.Element)}
}

func (c *lineCache) get(k cacheKey) *lineIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheItem).index
}

func (c *lineCache) put(k cacheKey, x *lineIndex) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		e.Value.(*cacheItem).index = x
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&cacheItem{k, x})
	if c.order.Len() > cachedIndexes {
		old := c.order.Remove(c.order.Back()).(*cacheItem)
		delete(c.items, old.key)
	}
}
