package toolfs

import (
	"context"
	"errors"
	"io"
	"unsafe"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
)

// read is one Stat, then ReadText or StreamText, then the window, then the
// observation of the version that stat saw.
func (t *toolset) read(ctx context.Context, call *registry.Call, args readArgs) (*ReadResult, error) {
	req, err := args.parse(t.cfg.ReadLimit)
	if err != nil {
		return nil, err
	}
	fsys, target, err := t.resolve(ctx, call, req.path)
	if err != nil {
		return nil, err
	}
	info, err := fsys.Stat(ctx, target)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, fs.NotFound("read", target.Path)
	}
	if info.Type != fs.TypeFile {
		return nil, fs.NotRegularFile("read", target.Path)
	}
	lines, total, err := t.page(ctx, fsys, target, info, req)
	if err != nil {
		return nil, err
	}
	r, err := newReadResult(target.Path, req, lines, total)
	if err != nil {
		return nil, err
	}
	if err := t.observed(ctx, call, target, info.Version); err != nil {
		return nil, err
	}
	return r, nil
}

// newReadResult checks the offset against the exact total (offset 1 is valid on
// an empty file) and builds the value.
func newReadResult(path string, req readRequest, lines []Line, total int) (*ReadResult, error) {
	if req.offset > total && !(req.offset == 1 && total == 0) {
		return nil, fs.Errorf(fs.CodeNotFound, "offset %d is out of range for %s (%d lines)", req.offset, quoted(path), total)
	}
	if lines == nil {
		lines = []Line{}
	}
	return &ReadResult{Path: path, Offset: req.offset, Lines: lines, TotalLines: total, limit: req.limit}, nil
}

// page reads the requested lines and the exact line count. Small files are
// read whole; large or unsized ones stream. When the provider can stream a
// pinned version from an offset, the page comes from pageAt instead.
func (t *toolset) page(ctx context.Context, fsys fs.FileSystem, target fs.Target, info *fs.Info, req readRequest) ([]Line, int, error) {
	if info.Size >= 0 && info.Size < t.cfg.ReadStreamMinSize {
		text, err := fsys.ReadText(ctx, target)
		if err != nil {
			return nil, 0, err
		}
		w := newWindow(t.caps, req.offset, req.limit, 1, 0, nil)
		// The window only reads its input, so it can see the string's bytes.
		w.feed(unsafe.Slice(unsafe.StringData(text), len(text)))
		total := w.finish()
		return w.lines, total, nil
	}
	if seeker, ok := fsys.(fs.TextSeeker); ok && info.Version != "" {
		lines, total, err := t.pageAt(ctx, seeker, target, info.Version, req)
		if !errors.Is(err, fs.ErrStaleVersion) {
			return lines, total, err
		}
		// The file changed after the stat: read whatever is there now, as
		// an unpinned stream would, and index nothing.
	}
	r, err := fsys.StreamText(ctx, target)
	if err != nil {
		return nil, 0, err
	}
	w := newWindow(t.caps, req.offset, req.limit, 1, 0, nil)
	if err := pump(r, w, false); err != nil {
		return nil, 0, err
	}
	total := w.finish()
	return w.lines, total, nil
}

// pageAt reads a page of version v. The first read of a version scans it
// whole and records a line index; when the provider is also a LineScanner,
// it validates and counts in parallel, and the window looks only at the
// segments that hold its page or an index line. Later reads of that version
// take the total from the index, start streaming at the closest indexed
// line before the page, and stop at its end, so they cost about the page.
func (t *toolset) pageAt(ctx context.Context, seeker fs.TextSeeker, target fs.Target, v fs.Version, req readRequest) ([]Line, int, error) {
	key := cacheKey{target.Key, v}
	if idx := t.lines.get(key); idx != nil {
		if req.offset > idx.total {
			return nil, idx.total, nil
		}
		line, pos := idx.start(req.offset)
		w := newWindow(t.caps, req.offset, req.limit, line, pos, nil)
		if err := streamFrom(ctx, seeker, target, v, pos, w, true); err != nil {
			return nil, 0, err
		}
		w.finish()
		return w.lines, idx.total, nil
	}
	index := newIndexBuilder()
	w := newWindow(t.caps, req.offset, req.limit, 1, 0, index)
	var err error
	if scanner, ok := seeker.(fs.LineScanner); ok {
		err = scanner.ScanLines(ctx, target, v, func(text []byte, newlines int) error {
			w.feedCounted(text, newlines)
			return nil
		})
	} else {
		err = streamFrom(ctx, seeker, target, v, 0, w, false)
	}
	if err != nil {
		return nil, 0, err
	}
	total := w.finish()
	t.lines.put(key, index.freeze(total))
	return w.lines, total, nil
}

func streamFrom(ctx context.Context, s fs.TextSeeker, target fs.Target, v fs.Version, pos int64, w *window, stopWhenFull bool) error {
	r, err := s.StreamTextFrom(ctx, target, v, pos)
	if err != nil {
		return err
	}
	return pump(r, w, stopWhenFull)
}

// errPageDone stops a stream once the page is complete (the total is known).
var errPageDone = errors.New("toolfs: page complete")

// pageWriter feeds a window as an io.Writer, so that io.Copy hands it the
// provider's own buffer when the stream implements io.WriterTo (no copy).
type pageWriter struct {
	w            *window
	stopWhenFull bool
}

func (p pageWriter) Write(b []byte) (int, error) {
	p.w.feed(b)
	if p.stopWhenFull && p.w.full {
		return len(b), errPageDone
	}
	return len(b), nil
}

// pump feeds the stream to the window and closes it. With stopWhenFull it
// stops once the page is complete.
func pump(r io.ReadCloser, w *window, stopWhenFull bool) error {
	defer r.Close()
	_, err := io.Copy(pageWriter{w, stopWhenFull}, r)
	if err == errPageDone {
		return nil
	}
	return err
}
