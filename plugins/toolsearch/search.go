package toolsearch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolsearch/internal/ignore"
)

// A search runs in three stages: the walk (one goroutine) picks files in
// walk order, workers (two per processor) read and match them in
// parallel, and the calling goroutine collects their lines in walk order.
// The walk blocks once window files are ahead of the collector, so memory
// is bounded by the window and the result, whatever the tree.
type search struct {
	ctx    context.Context // the call's; its end means aborted
	inner  context.Context // also cancelled when the search fails
	cancel context.CancelFunc
	s      *scope
	filter filter
	scan   scanner
	rawCap int64

	order chan *fileJob // every job, in walk order
	jobs  chan *fileJob // the jobs the workers take
	// visited and walkErr are written by the walk before it closes
	// order; the collector reads them after.
	visited bool
	walkErr error
}

// window is how many files the walk may run ahead of the collector.
const window = 256

// fileJob is one file to search and, once done is signalled, its lines.
type fileJob struct {
	entry    fs.WalkEntry
	sub      string
	explicit bool // the root itself: searched whole, whatever its bytes
	done     chan struct{}
	lines    []foundLine
	searched bool  // opened: it counts as searched even when binary
	size     int64 // the bytes of lines, for the raw-output cap
	err      error
}

type foundLine struct {
	number int
	text   string
}

var jobPool = sync.Pool{New: func() any { return &fileJob{done: make(chan struct{}, 1)} }}

func newSearch(ctx context.Context, s *scope, m lineMatcher, include *ignore.Override, rawCap int64) *search {
	inner, cancel := context.WithCancel(ctx)
	_, raw := s.fsys.(fs.Walker)
	// Twice the processors: a worker waiting in open or read leaves its
	// processor to another (measured: a grep of Go's src/ took 25% less
	// time than with one worker per processor).
	workers := 2 * runtime.GOMAXPROCS(0)
	r := &search{
		ctx: ctx, inner: inner, cancel: cancel, s: s, rawCap: rawCap,
		filter: filter{ctx: inner, s: s, include: include},
		scan:   scanner{m: m, raw: raw, maxBytes: rawCap},
		order:  make(chan *fileJob, window),
		jobs:   make(chan *fileJob, workers),
	}
	r.filter.search = func(e fs.WalkEntry, sub string) error { return r.dispatch(e, sub, false) }
	return r
}

// run searches and collects. Any failure fails the whole call, as rg's
// exit status 2 does, even after matches.
func (r *search) run() (*GrepResult, error) {
	defer r.cancel()
	workers := cap(r.jobs)
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			for j := range r.jobs {
				r.work(j)
			}
		}()
	}
	go r.walk()
	res, err := r.collect()
	wg.Wait()
	if p, ok := err.(*panicked); ok {
		panic(p.value)
	}
	return res, err
}

// panicked carries a panic of the walk or of a worker to the calling
// goroutine, which panics again so that the registry reports it as it
// reports a panic of any tool body, instead of the process crashing.
type panicked struct{ value any }

func (p *panicked) Error() string { return fmt.Sprint("panic: ", p.value) }

// work searches one file and signals the collector, whatever happens.
func (r *search) work(j *fileJob) {
	defer func() {
		if v := recover(); v != nil {
			j.err = &panicked{v}
		}
		j.done <- struct{}{}
	}()
	r.scan.file(r.inner, j)
}

// walk visits the tree and hands the files to search over, in order.
func (r *search) walk() {
	defer close(r.jobs)
	defer close(r.order)
	defer func() {
		if v := recover(); v != nil {
			r.walkErr = &panicked{v}
		}
	}()
	r.walkErr = fs.Walk(r.inner, r.s.fsys, r.s.root, r.visit)
	if r.walkErr == nil {
		r.walkErr = r.filter.finish()
	}
}

func (r *search) visit(e fs.WalkEntry) error {
	r.visited = true
	sub, typ := e.Path(), e.Type()
	switch {
	case sub != "":
		return r.filter.visit(e, sub, typ)
	case typ == fs.TypeDirectory:
		return r.filter.enterRoot()
	case typ == fs.TypeFile:
		return r.dispatch(e, sub, true)
	}
	return nil
}

// dispatch queues a file. A job in order always gets its done signal: by
// a worker, or here when the search ends before a worker takes it.
func (r *search) dispatch(e fs.WalkEntry, sub string, explicit bool) error {
	j := jobPool.Get().(*fileJob)
	j.entry, j.sub, j.explicit = e, sub, explicit
	select {
	case r.order <- j:
	case <-r.inner.Done():
		recycle(j)
		return r.inner.Err()
	}
	select {
	case r.jobs <- j:
		return nil
	case <-r.inner.Done():
		err := r.inner.Err()
		j.err = err
		j.done <- struct{}{} // the collector owns j from here
		return err
	}
}

// collect takes the jobs in walk order and builds the value; after the
// first failure it only drains.
func (r *search) collect() (*GrepResult, error) {
	res := &GrepResult{Matches: []GrepMatch{}}
	var (
		raw      int64
		searched bool
		failure  error
	)
	for j := range r.order {
		<-j.done
		if failure == nil {
			failure = j.err
			searched = searched || j.searched
			if failure == nil && len(j.lines) > 0 {
				failure = r.add(res, j, &raw)
			}
			if failure != nil {
				r.cancel()
			}
		}
		recycle(j)
	}
	switch {
	case r.ctx.Err() != nil:
		return nil, aborted("grep", r.ctx.Err())
	case failure != nil:
		return nil, r.failed(failure)
	case r.walkErr != nil:
		return nil, r.s.walkError(r.ctx, "grep", r.walkErr, r.visited)
	case !searched && r.s.spelled == "":
		return nil, searchFailed("grep", noFilesSearched, nil)
	}
	return res, nil
}

// add appends a file's lines under its display path, counting the raw
// output: the bytes of every match's path and line.
func (r *search) add(res *GrepResult, j *fileJob, raw *int64) error {
	path := r.s.display(j.sub)
	for _, l := range j.lines {
		if *raw += int64(len(path) + len(l.text)); *raw > r.rawCap {
			return overflow("grep", *raw, r.rawCap)
		}
		res.Matches = append(res.Matches, GrepMatch{Path: path, LineNumber: l.number, Line: l.text})
	}
	return nil
}

// failed words a failure to read a file as rg's exit 2.
func (r *search) failed(err error) error {
	var fe *fs.Error
	switch err.(type) {
	case *SearchError, *panicked:
		return err
	}
	if errors.As(err, &fe) {
		return searchFailed("grep", fe.Message, err)
	}
	return searchFailed("grep", err.Error(), err)
}

func recycle(j *fileJob) {
	if cap(j.lines) > 1024 {
		j.lines = nil
	}
	*j = fileJob{done: j.done, lines: j.lines[:0]}
	jobPool.Put(j)
}
