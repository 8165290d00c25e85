package fslocal

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

const (
	// sniffLen is how far read looks for a NUL byte (binary detection).
	sniffLen = 8192
	// streamBuf is the fixed buffer of a text stream: a stream never holds
	// more of the file than this (plus at most 3 carried bytes).
	streamBuf = 64 << 10
	// readChunk bounds one read(2) of a whole-file read, so that
	// cancellation is noticed between chunks.
	readChunk = 4 << 20
)

var bom = []byte{0xEF, 0xBB, 0xBF}

// ReadText returns the whole text: a NUL in the first 8192 bytes is a binary
// file, anything but strict UTF-8 is invalid, a leading BOM is hidden and
// nothing else changes.
func (f *FS) ReadText(ctx context.Context, t fs.Target) (_ string, err error) {
	if err := f.calls.enter("read", t.Path); err != nil {
		return "", err
	}
	defer f.calls.done("read", t.Path, &err)
	if err := ctx.Err(); err != nil {
		return "", fs.Aborted("read", err)
	}
	file, st, err := f.openRegular("read", t)
	if err != nil {
		return "", err
	}
	defer file.Close()
	data, err := readAll(ctx, "read", t.Path, file, st.Size)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0 {
		return "", binaryFile("read", t.Path)
	}
	data = bytes.TrimPrefix(data, bom)
	if !utf8.Valid(data) {
		return "", invalidText("read", t.Path)
	}
	return unsafeString(data), nil
}

// StreamText streams the text as ReadText would return it, through a fixed
// buffer. A binary file fails here; invalid UTF-8 and cancellation surface
// from Read as *fs.Error, before any text of the failing chunk, so a
// consumer that stops at the first error never takes a partial window of an
// invalid file for success.
func (f *FS) StreamText(ctx context.Context, t fs.Target) (_ io.ReadCloser, err error) {
	if err := f.calls.enter("read", t.Path); err != nil {
		return nil, err
	}
	defer f.calls.done("read", t.Path, &err)
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("read", err)
	}
	file, _, err := f.openRegular("read", t)
	if err != nil {
		return nil, err
	}
	return newStream(ctx, file, t.Path, 0, true, streamBuf)
}

// StreamTextFrom streams the text from offset, a byte offset into the
// decoded text (after a BOM), while the file is still at version v. A
// missing or changed file is FS_STALE_VERSION. The bytes before offset are
// not read again: v vouches for them, so binary detection covers only the
// part of the first 8192 bytes at or after offset.
func (f *FS) StreamTextFrom(ctx context.Context, t fs.Target, v fs.Version, offset int64) (_ io.ReadCloser, err error) {
	if err := f.calls.enter("read", t.Path); err != nil {
		return nil, err
	}
	defer f.calls.done("read", t.Path, &err)
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("read", err)
	}
	file, st, textStart, err := f.openVersion(t, v)
	if err != nil {
		return nil, err
	}
	start := textStart + offset
	if offset < 0 || start > st.Size {
		file.Close()
		return nil, fs.Errorf(fs.CodeIO, `cannot read "%s": offset %d is outside the text`, fs.Clip(t.Path), offset)
	}
	if _, err := file.Seek(start, io.SeekStart); err != nil {
		file.Close()
		return nil, osError("read", t.Path, err)
	}
	return newStream(ctx, file, t.Path, start, false, streamBuf)
}

// openVersion opens the file at t for reading while it is at version v (a
// missing or changed file is FS_STALE_VERSION), and returns where its
// decoded text starts: 3 after a BOM, else 0.
func (f *FS) openVersion(t fs.Target, v fs.Version) (*os.File, *confine.Stat, int64, error) {
	file, st, err := f.openRegular("read", t)
	if err != nil {
		if fs.CodeOf(err) == fs.CodeNotFound {
			return nil, nil, 0, fs.Errorf(fs.CodeStaleVersion, `cannot read "%s": file no longer exists`, fs.Clip(t.Path))
		}
		return nil, nil, 0, err
	}
	if versionOf(st) != v {
		file.Close()
		return nil, nil, 0, changed(t.Path)
	}
	var head [3]byte
	n, err := file.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		file.Close()
		return nil, nil, 0, osError("read", t.Path, err)
	}
	if bytes.Equal(head[:n], bom) {
		return file, st, int64(len(bom)), nil
	}
	return file, st, 0, nil
}

func changed(path string) *fs.Error {
	return fs.Errorf(fs.CodeStaleVersion, `cannot read "%s": file changed since it was read`, fs.Clip(path))
}

// openRegular opens the file at t for reading once it is known to be a
// regular file. The type is checked by stat before the open (so a FIFO is
// never opened) and again on the descriptor (O_NONBLOCK keeps a FIFO that
// replaced the file in between from blocking the open).
func (f *FS) openRegular(verb string, t fs.Target) (*os.File, *confine.Stat, error) {
	r, name, err := f.locate(t, false)
	if err != nil {
		return nil, nil, osError(verb, t.Path, err)
	}
	var st confine.Stat
	if err := r.stat(name, &st); err != nil {
		if isAbsent(err) {
			return nil, nil, fs.NotFound(verb, t.Path)
		}
		return nil, nil, osError(verb, t.Path, err)
	}
	if !confine.IsRegular(&st) {
		return nil, nil, fs.NotRegularFile(verb, t.Path)
	}
	file, err := r.open(name, confine.ReadFlags, 0)
	if err != nil {
		if isAbsent(err) {
			return nil, nil, fs.NotFound(verb, t.Path)
		}
		return nil, nil, osError(verb, t.Path, err)
	}
	if err := confine.Fstat(file, &st); err != nil {
		file.Close()
		return nil, nil, osError(verb, t.Path, err)
	}
	if !confine.IsRegular(&st) {
		file.Close()
		return nil, nil, fs.NotRegularFile(verb, t.Path)
	}
	return file, &st, nil
}

// readAll reads the whole file in chunks, checking ctx between them; size
// is a hint (the file may grow or shrink meanwhile).
func readAll(ctx context.Context, verb, path string, file *os.File, size int64) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fs.Aborted(verb, err)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := file.Read(data[len(data):min(cap(data), len(data)+readChunk)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, osError(verb, path, err)
		}
	}
}

// unsafeString views b as a string without copying; b must never be written
// again (callers drop it).
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func binaryFile(verb, path string) *fs.Error {
	return fs.Errorf(fs.CodeNotText, `cannot %s "%s": binary file`, verb, fs.Clip(path))
}

func invalidText(verb, path string) *fs.Error {
	return fs.Errorf(fs.CodeNotText, `cannot %s "%s": invalid UTF-8 text`, verb, fs.Clip(path))
}

// sniff fails with "binary file" when the part of the binary-sniff window
// (the first 8192 bytes of the file) at or after from holds a NUL byte.
func sniff(file *os.File, path string, from int64) error {
	if from >= sniffLen {
		return nil
	}
	var head [sniffLen]byte
	n, err := file.ReadAt(head[:sniffLen-from], from)
	if err != nil && err != io.EOF {
		return osError("read", path, err)
	}
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return binaryFile("read", path)
	}
	return nil
}

// textStream decodes a file through one fixed buffer. buf[r:w] is validated
// text not yet handed out; buf[w:n] is an incomplete UTF-8 sequence carried
// to the next fill. Binary detection happened before the stream was made.
type textStream struct {
	ctx      context.Context
	file     *os.File
	path     string
	buf      []byte
	r, w, n  int
	stripBOM bool
	err      error // sticky: io.EOF or an *fs.Error
}

// newStream checks the binary-sniff window from the file's current offset
// pos, then returns a stream over the rest of the file.
func newStream(ctx context.Context, file *os.File, path string, pos int64, stripBOM bool, bufSize int) (*textStream, error) {
	if err := sniff(file, path, pos); err != nil {
		file.Close()
		return nil, err
	}
	var buf []byte
	if bufSize == streamBuf {
		buf = *streamBufs.Get().(*[]byte)
	} else {
		buf = make([]byte, bufSize)
	}
	return &textStream{ctx: ctx, file: file, path: path, buf: buf, stripBOM: stripBOM}, nil
}

// streamBufs recycles stream buffers: a paged read opens a short stream per
// page, and a fresh 64 KiB allocation would cost more than the page.
var streamBufs = sync.Pool{New: func() any { b := make([]byte, streamBuf); return &b }}

func (s *textStream) Read(p []byte) (int, error) {
	for s.r == s.w {
		if s.err != nil {
			return 0, s.err
		}
		s.fill()
	}
	n := copy(p, s.buf[s.r:s.w])
	s.r += n
	return n, nil
}

// WriteTo lets io.Copy take the validated text straight from the buffer.
func (s *textStream) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if s.r < s.w {
			n, err := w.Write(s.buf[s.r:s.w])
			total += int64(n)
			s.r += n
			if err != nil {
				return total, err
			}
			continue
		}
		if s.err == io.EOF {
			return total, nil
		}
		if s.err != nil {
			return total, s.err
		}
		s.fill()
	}
}

// Close releases the file and the buffer; a later Read fails.
func (s *textStream) Close() error {
	if s.buf == nil {
		return os.ErrClosed
	}
	if len(s.buf) == streamBuf {
		buf := s.buf
		streamBufs.Put(&buf)
	}
	s.buf, s.r, s.w, s.n, s.err = nil, 0, 0, 0, os.ErrClosed
	return s.file.Close()
}

// fill refills buf once everything validated was handed out: it keeps the
// carried bytes, reads more, and validates up to the last complete sequence.
func (s *textStream) fill() {
	if err := s.ctx.Err(); err != nil {
		s.err = fs.Aborted("read", err)
		return
	}
	carried := copy(s.buf, s.buf[s.w:s.n])
	s.r, s.w, s.n = 0, 0, carried
	eof := false
	for s.n < len(s.buf) && (s.n == carried || (s.stripBOM && s.n < len(bom))) {
		m, err := s.file.Read(s.buf[s.n:])
		s.n += m
		if err == io.EOF {
			eof = true
			break
		}
		if err != nil {
			s.err = osError("read", s.path, err)
			return
		}
	}
	chunk := s.buf[:s.n]
	if s.stripBOM {
		s.stripBOM = false
		if bytes.HasPrefix(chunk, bom) {
			s.r = len(bom)
		}
	}
	s.w = s.n
	if !eof {
		s.w -= incompleteTail(chunk[s.r:])
	}
	if !utf8.Valid(chunk[s.r:s.w]) {
		s.r, s.w = 0, 0
		s.err = invalidText("read", s.path)
		return
	}
	if eof {
		s.err = io.EOF
	}
}

// incompleteTail is the length of a UTF-8 sequence cut short at the end of
// b (0 if b ends on a sequence boundary or in an invalid sequence).
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}
