package fslocal

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

const (
	// scanMapChunk is what one scan worker maps and validates at a time:
	// big enough that the mapping and its hand-off cost little, small
	// enough that the few in view stay a small part of the resident set.
	scanMapChunk = 4 << 20
	// scanReadChunk is what one reading worker holds: reads cost no
	// mapping, so smaller chunks keep the buffers small.
	scanReadChunk = 1 << 20
	// scanSegment is the granularity of the newline counts handed to the
	// visitor: a consumer looking for one line scans at most this much.
	scanSegment = 16 << 10
	// scanRead is how much a reading worker reads at a time, so that it
	// validates the bytes while they are still in the CPU's cache.
	scanRead = 64 << 10
	// scanAhead is how far a chunk's view reaches past its own bytes, to
	// see a sequence that straddles the cut (and as far before it).
	scanAhead = utf8.UTFMax - 1
	// scanWorkers caps the workers: memory bandwidth is shared, and each
	// worker adds a mapped chunk to the resident set.
	scanWorkers = 4
)

var _ fs.LineScanner = (*FS)(nil)

// ScanLines splits the text of version v into chunks for workers that
// validate and count them, and visits the chunks in order on the calling
// goroutine. The workers are one reader, one reader per CPU (at most 4),
// or as many mapping their chunks, whichever measured fastest on this
// machine (see scanChooser). At most one chunk more than there are workers
// is in view at a time. Mapped text is the file itself: a concurrent writer could
// change it after its validation, but such a write changes the version,
// which fails the scan at its end.
func (f *FS) ScanLines(ctx context.Context, t fs.Target, v fs.Version, visit func(text []byte, newlines int) error) (err error) {
	if err := f.calls.enter("read", t.Path); err != nil {
		return err
	}
	defer f.calls.done("read", t.Path, &err)
	return f.scanLines(ctx, t, v, &scanMethods, visit)
}

// scanStrategy scans the whole text of s: as one method, or, measuring,
// as several, one range after the other.
type scanStrategy interface {
	scan(s *scan, visit func([]byte, int) error) error
}

// scanConfig is one method of scanning: how a scan splits its work.
type scanConfig struct {
	chunk   int  // bytes per job, at least utf8.UTFMax
	workers int  // goroutines viewing, validating and counting jobs
	read    bool // read every chunk, as for a file that cannot be mapped
}

var _ scanStrategy = scanConfig{}

func (c scanConfig) scan(s *scan, visit func([]byte, int) error) error {
	return s.run(c, s.start, s.end, visit)
}

func (f *FS) scanLines(ctx context.Context, t fs.Target, v fs.Version, how scanStrategy, visit func([]byte, int) error) error {
	if err := ctx.Err(); err != nil {
		return fs.Aborted("read", err)
	}
	file, st, start, err := f.openVersion(t, v)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := sniff(file, t.Path, start); err != nil {
		return err
	}
	s := scan{ctx: ctx, file: file, path: t.Path, start: start, end: st.Size}
	if err := how.scan(&s, visit); err != nil {
		// Bytes that fail to decode may be a write landing during the scan:
		// then the file changed, and the caller reads the new version.
		if errors.Is(err, fs.ErrNotText) && confine.Fstat(file, st) == nil && versionOf(st) != v {
			return changed(t.Path)
		}
		return err
	}
	// Every chunk was read at the size and version seen on open; a write
	// during the scan changes the version, so the text is one version's.
	if err := confine.Fstat(file, st); err != nil {
		return osError("read", t.Path, err)
	}
	if versionOf(st) != v {
		return changed(t.Path)
	}
	return nil
}

// scan is one pass over the text file[start:end).
type scan struct {
	ctx        context.Context
	file       *os.File
	path       string
	start, end int64
}

// scanJob is one chunk, file[lo:hi), in flight. The worker fills text (the
// chunk's bytes) and counts (newlines per scanSegment of text), or err,
// then closes done.
type scanJob struct {
	lo, hi  int64
	mapping []byte // the mapped pages, or nil
	buf     []byte // the read buffer when the chunk is not mapped
	data    []byte // file[lo-scanAhead:hi+scanAhead], clamped to the text
	filled  int    // how much of data holds the file's bytes so far
	text    []byte // data's view of [lo, hi)
	counts  []int
	err     error
	done    chan struct{}
}

// run splits the text's range [from, to) into chunks for the workers, and
// visits them in order as they complete. The first failure in text order
// wins, as in a sequential read; cancellation is checked before every
// chunk. The workers are gone when it returns, so ranges of one text can
// be run one after the other with different methods.
func (s *scan) run(cfg scanConfig, from, to int64, visit func([]byte, int) error) (err error) {
	chunk := cfg.chunk
	n := int((to - from + int64(chunk) - 1) / int64(chunk))
	if n == 0 {
		return nil
	}
	workers := min(cfg.workers, n)
	slots := min(workers+1, n)
	queue := make([]*scanJob, slots) // ring of jobs in text order
	for k := range queue {
		queue[k] = &scanJob{}
	}
	jobs := make(chan *scanJob, slots)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			debug.SetPanicOnFault(true) // see view
			for j := range jobs {
				s.fill(j, cfg.read)
			}
		})
	}
	// Workers use the file and the views: they finish before the views go.
	defer func() {
		for _, j := range queue {
			j.release()
			putScanBuf(j.buf)
		}
	}()
	defer wg.Wait()
	defer close(jobs)
	// The visitor reads the views too: a fault there is the same change.
	var visiting *scanJob // done, not yet handed back: only this goroutine reads it
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if visiting == nil || !faultIn(r, visiting) {
				panic(r)
			}
			err = changed(s.path)
		}
	}()

	dispatch := func(i int) {
		j := queue[i%slots]
		j.release()
		j.lo = from + int64(i)*int64(chunk)
		j.hi = min(j.lo+int64(chunk), to)
		j.done = make(chan struct{})
		jobs <- j
	}
	for i := range slots {
		dispatch(i)
	}
	for i := range n {
		if err := s.ctx.Err(); err != nil {
			return fs.Aborted("read", err)
		}
		j := queue[i%slots]
		<-j.done
		if j.err != nil {
			return j.err
		}
		visiting = j
		for k, count := range j.counts {
			if err := visit(j.text[k*scanSegment:min((k+1)*scanSegment, len(j.text))], count); err != nil {
				return err
			}
		}
		if i+slots < n {
			dispatch(i + slots)
		}
	}
	return nil
}

// fill views one chunk with scanAhead bytes on each side, then, segment by
// segment while it is in the L1 cache, validates the UTF-8 sequences that
// start in it (see cutAt) and counts its newlines.
func (s *scan) fill(j *scanJob, read bool) {
	defer close(j.done)
	defer func() {
		if r := recover(); r != nil {
			if !faultIn(r, j) {
				panic(r)
			}
			j.err = changed(s.path)
		}
	}()
	if err := s.ctx.Err(); err != nil {
		j.err = fs.Aborted("read", err)
		return
	}
	from, to := max(j.lo-scanAhead, s.start), min(j.hi+scanAhead, s.end)
	if j.err = j.view(s, from, to, read); j.err != nil {
		return
	}
	b := j.data
	lo, hi := int(j.lo-from), int(j.hi-from)
	j.text = b[lo:hi]
	j.counts = j.counts[:0]
	cut := lo // moved onto a sequence boundary once its bytes are in
	for k := lo; k < hi; k += scanSegment {
		e := min(k+scanSegment, hi)
		final := e+utf8.UTFMax > hi // a cut at e could land before the previous one
		next := e
		if final {
			next = hi
		}
		if j.err = j.fillTo(s, from, min(next+scanAhead, len(b))); j.err != nil {
			return
		}
		if k == lo {
			cut = cutAt(b, lo, j.lo == s.start)
		}
		next = cutAt(b, next, final && j.hi == s.end)
		if !utf8.Valid(b[cut:next]) {
			j.err = invalidText("read", s.path)
			return
		}
		cut = next
		j.counts = append(j.counts, bytes.Count(b[k:e], newline))
	}
}

// view makes j.data the bytes file[from:to). It maps them (copying them
// out of the page cache costs more than validating and counting them), or,
// when the file cannot be mapped, makes room for fillTo to read them into.
// Touching a mapped page that a shrinking file lost faults; SetPanicOnFault
// turns that into a panic, which the scan turns into a changed-file error,
// as it does a short read.
func (j *scanJob) view(s *scan, from, to int64, read bool) error {
	if !read {
		if m, off, err := mapRange(s.file, from, to); err == nil {
			j.mapping, j.data = m, m[off:]
			return nil
		}
	}
	// The copy out of the page cache runs several times slower when the
	// buffer and the file offset sit at different offsets within a page,
	// so data starts in the buffer where from starts in its page.
	page := int64(os.Getpagesize())
	if int64(cap(j.buf)) < to-from+page {
		putScanBuf(j.buf)
		j.buf = getScanBuf(int(to - from + page))
	}
	at := (from - int64(uintptr(unsafe.Pointer(unsafe.SliceData(j.buf))))) & (page - 1)
	j.data, j.filled = j.buf[at:at+to-from], 0
	return nil
}

// fillTo reads the view's bytes up to data[:n], scanRead at a time, unless
// they are mapped.
func (j *scanJob) fillTo(s *scan, from int64, n int) error {
	if j.mapping != nil {
		return nil
	}
	for j.filled < n {
		p := j.data[j.filled:min(j.filled+scanRead, len(j.data))]
		if k, err := s.file.ReadAt(p, from+int64(j.filled)); k < len(p) {
			if err == nil || err == io.EOF { // shorter than on open
				return changed(s.path)
			}
			return osError("read", s.path, err)
		}
		j.filled += len(p)
	}
	return nil
}

// release drops the job's view.
func (j *scanJob) release() {
	if j.mapping != nil {
		unmap(j.mapping)
	}
	j.mapping, j.data, j.text = nil, nil, nil
}

// scanBufSize holds a read chunk's view wherever it starts in a page.
var scanBufSize = scanReadChunk + 2*scanAhead + os.Getpagesize()

// scanBufs keeps the read buffers of past scans, as many as one scan
// uses: a fresh buffer faults its pages in one by one on first use, which
// costs several times the reads into it.
var scanBufs = make(chan []byte, scanWorkers+1)

// getScanBuf returns a buffer of at least n bytes.
func getScanBuf(n int) []byte {
	if n <= scanBufSize {
		select {
		case b := <-scanBufs:
			return b
		default:
		}
	}
	return make([]byte, max(n, scanBufSize))
}

// putScanBuf keeps b for a later scan if it is of the kept size and there
// is room.
func putScanBuf(b []byte) {
	if cap(b) != scanBufSize {
		return
	}
	select {
	case scanBufs <- b[:cap(b)]:
	default:
	}
}

// faultIn reports whether a recovered value is a memory fault, turned
// into a panic by SetPanicOnFault, at an address in j's mapping. Any other
// panic is not the scan's to handle.
func faultIn(r any, j *scanJob) bool {
	f, ok := r.(interface{ Addr() uintptr })
	if !ok || len(j.mapping) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(j.mapping)))
	return f.Addr() >= start && f.Addr()-start < uintptr(len(j.mapping))
}

var newline = []byte{'\n'}

// cutAt moves a chunk cut at index i of b onto a sequence boundary: past
// the end of a sequence that starts in the scanAhead bytes before i and
// reaches over i, clamped to len(b); edge (the text's start or end) stays.
// Both chunks beside a cut see the same bytes around it, so they agree on
// where it lands: every byte is validated once, by exactly one chunk. On
// valid text the landing point is a character boundary, so valid text
// passes; on invalid text some piece fails, as the pieces concatenated
// are the whole text.
func cutAt(b []byte, i int, edge bool) int {
	if edge {
		return i
	}
	for k := i - 1; k >= 0 && k >= i-scanAhead; k-- {
		if utf8.RuneStart(b[k]) {
			return min(max(i, k+seqLen(b[k])), len(b))
		}
	}
	return i
}

// seqLen is the length of the UTF-8 sequence that leading byte c announces
// (1 for ASCII and for bytes that cannot lead one).
func seqLen(c byte) int {
	switch {
	case c < 0xC2:
		return 1
	case c < 0xE0:
		return 2
	case c < 0xF0:
		return 3
	case c < 0xF5:
		return 4
	}
	return 1
}
