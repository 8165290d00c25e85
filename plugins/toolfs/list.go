package toolfs

import (
	"container/list"
	"context"
	"sync"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
)

// list is one listing of names and types: no stat per child beyond the
// provider's typing, and no observation (a listing reads no content, so
// it must not satisfy the read-before-write policy). The listing of a
// large directory is kept while the provider vouches for it, so that the
// next pages cost a Stat.
func (t *toolset) list(ctx context.Context, call *registry.Call, args listArgs) (*ListResult, error) {
	req, err := args.parse()
	if err != nil {
		return nil, err
	}
	fsys, target, err := t.resolve(ctx, call, req.path)
	if err != nil {
		return nil, err
	}
	l := t.listings.get(ctx, fsys, target)
	if l == nil {
		var b listingBuilder
		v, err := fs.ListNames(ctx, fsys, target, b.add)
		if err == errTooManyNames {
			return nil, fs.Errorf(fs.CodeIO, "cannot list %s: %v", quoted(target.Path), err)
		}
		if err != nil {
			return nil, err
		}
		l = b.sorted()
		t.listings.put(fsys, target, v, l)
	}
	return listPage(target.Path, l, req.offset, t.cfg.ListMaxEntries)
}

// listPage cuts the requested page of l.
func listPage(path string, l *listing, offset, pageSize int) (*ListResult, error) {
	if offset > l.len() && !(offset == 1 && l.len() == 0) {
		return nil, fs.Errorf(fs.CodeNotFound, "offset %d is out of range for %s (%d entries)", offset, quoted(path), l.len())
	}
	return &ListResult{
		Path:         path,
		Offset:       offset,
		Entries:      l.entries(offset-1, min(offset-1+pageSize, l.len())),
		TotalEntries: l.len(),
		Counts:       l.counts,
	}, nil
}

// listCache keeps the sorted listings of large directories, by provider
// and target key, each with the version its provider vouched for, the
// least recently used dropped past a total size. A listing is used only
// while Stat reports its version.
type listCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // of *cachedListing, most recently used first
	byKey map[listKey]*list.Element
}

type listKey struct {
	fsys fs.FileSystem
	key  string
}

type cachedListing struct {
	k       listKey
	version fs.Version
	l       *listing
}

// A listing is kept when it has at least minCachedEntries children (a
// smaller one lists in a few milliseconds) and the cache holds at most
// maxCachedBytes of listings: a directory of a million 12-byte names
// takes about 17 MiB.
const (
	minCachedEntries = 4096
	maxCachedBytes   = 64 << 20
)

func newListCache() *listCache {
	return &listCache{order: list.New(), byKey: map[listKey]*list.Element{}}
}

// get returns the cached listing of target if its version is current.
func (c *listCache) get(ctx context.Context, fsys fs.FileSystem, target fs.Target) *listing {
	k := listKey{fsys, target.Key}
	c.mu.Lock()
	e, ok := c.byKey[k]
	var cached *cachedListing
	if ok {
		cached = e.Value.(*cachedListing)
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	info, err := fsys.Stat(ctx, target)
	if err != nil || info == nil || info.Version != cached.version {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok && e.Value == cached {
		c.order.MoveToFront(e)
	}
	return cached.l
}

// put keeps l, listed at version v, when it is worth keeping.
func (c *listCache) put(fsys fs.FileSystem, target fs.Target, v fs.Version, l *listing) {
	if v == "" || l.len() < minCachedEntries || l.size() > maxCachedBytes {
		return
	}
	k := listKey{fsys, target.Key}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok {
		c.drop(e)
	}
	c.byKey[k] = c.order.PushFront(&cachedListing{k, v, l})
	for c.size += l.size(); c.size > maxCachedBytes; {
		c.drop(c.order.Back())
	}
}

func (c *listCache) drop(e *list.Element) {
	cached := c.order.Remove(e).(*cachedListing)
	delete(c.byKey, cached.k)
	c.size -= cached.l.size()
}
