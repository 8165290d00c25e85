package fslocal

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"sync"
	"unicode/utf8"

	"github.com/gordis-run/gordis/plugins/fs"
)

const (
	// scanChunk is what one scan worker reads (pread) and validates at a
	// time. Big enough that a chunk costs far more than its hand-off, small
	// enough that a few of them in flight stay cheap.
	scanChunk = 1 << 20
	// scanSegment is the granularity of the newline counts handed to the
	// visitor: a consumer looking for one line scans at most this much.
	scanSegment = 16 << 10
	// scanAhead is how far a chunk's read reaches past its own bytes, to
	// see a sequence that straddles the cut (and as far before it).
	scanAhead = utf8.UTFMax - 1
)

var _ fs.LineScanner = (*FS)(nil)

// ScanLines reads the text of version v in chunks with one worker per CPU,
// each validating and counting its chunk, and visits the chunks in order
// on the calling goroutine. It holds at most two chunks per worker.
func (f *FS) ScanLines(ctx context.Context, t fs.Target, v fs.Version, visit func(text []byte, newlines int) error) error {
	return scanLines(ctx, t, v, scanChunk, runtime.GOMAXPROCS(0), visit)
}

// scanLines is ScanLines with the chunk size and worker count as arguments.
func scanLines(ctx context.Context, t fs.Target, v fs.Version, chunk, workers int, visit func([]byte, int) error) error {
	if err := ctx.Err(); err != nil {
		return fs.Aborted("read", err)
	}
	file, st, start, err := openVersion(t, v)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := sniff(file, t.Path, start); err != nil {
		return err
	}
	s := scan{ctx: ctx, file: file, path: t.Path, start: start, end: st.Size}
	if err := s.run(chunk, workers, visit); err != nil {
		return err
	}
	// Every chunk was read at the size and version seen on open; a write
	// during the scan changes the version, so the text is one version's.
	if err := fstat(file, st); err != nil {
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
	lo, hi int64
	buf    []byte
	text   []byte
	counts []int
	err    error
	done   chan struct{}
}

// run splits the text into chunks of size chunk (at least utf8.UTFMax)
// for workers goroutines, and visits them in order as they complete. The
// first failure in text order wins, as in a sequential read; cancellation is
// checked before every chunk.
func (s *scan) run(chunk, workers int, visit func([]byte, int) error) error {
	n := int((s.end - s.start + int64(chunk) - 1) / int64(chunk))
	if n == 0 {
		return nil
	}
	workers = min(workers, n)
	slots := min(2*workers, n)
	jobs := make(chan *scanJob, slots)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				s.fill(j)
			}
		})
	}
	// Workers use the file and the buffers: they finish before run returns.
	defer wg.Wait()
	defer close(jobs)

	queue := make([]*scanJob, slots) // ring of jobs in text order
	for k := range queue {
		queue[k] = &scanJob{buf: make([]byte, chunk+2*scanAhead)}
	}
	dispatch := func(i int) {
		j := queue[i%slots]
		j.lo = s.start + int64(i)*int64(chunk)
		j.hi = min(j.lo+int64(chunk), s.end)
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

// fill reads one chunk with scanAhead bytes on each side, validates the
// UTF-8 sequences that start in it (see cutAt), and counts its newlines.
func (s *scan) fill(j *scanJob) {
	defer close(j.done)
	if err := s.ctx.Err(); err != nil {
		j.err = fs.Aborted("read", err)
		return
	}
	from, to := max(j.lo-scanAhead, s.start), min(j.hi+scanAhead, s.end)
	b := j.buf[:to-from]
	if n, err := s.file.ReadAt(b, from); n < len(b) {
		if err == nil || err == io.EOF { // shorter than on open: changed
			j.err = changed(s.path)
		} else {
			j.err = osError("read", s.path, err)
		}
		return
	}
	lo, hi := int(j.lo-from), int(j.hi-from)
	if !utf8.Valid(b[cutAt(b, lo, j.lo == s.start):cutAt(b, hi, j.hi == s.end)]) {
		j.err = invalidText("read", s.path)
		return
	}
	j.text = b[lo:hi]
	j.counts = j.counts[:0]
	for k := 0; k < len(j.text); k += scanSegment {
		j.counts = append(j.counts, bytes.Count(j.text[k:min(k+scanSegment, len(j.text))], newline))
	}
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
