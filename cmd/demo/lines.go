package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime/debug"
)

// lineBufSize is the read buffer of lineReader: a line that fits is copied
// out of it, a longer one is read as long lines are.
const lineBufSize = 64 << 10

// lineReader reads the lines of replay's input, each into storage of its
// own: a call's args go to the registry as bytes of their line, and may be
// held by it after the next line is read.
//
// A line longer than the buffer may be a write of 64 MiB. From a regular
// file it is read twice, the first time through the buffer to find where
// it ends, then once into storage of its size, so the process holds it
// once; the second read comes from the page cache. From a pipe, which
// cannot be read twice, it goes through a temporary file (see spill).
type lineReader struct {
	in io.Reader
	// file is in when it is a regular file, read from offset pos.
	file *os.File
	pos  int64 // the input offset of buf[w]
	buf  []byte
	r, w int   // buf[r:w] is read and not yet returned
	err  error // what ended the input: io.EOF, or a read error
}

func newLineReader(in io.Reader) *lineReader {
	lr := &lineReader{in: in, buf: make([]byte, lineBufSize)}
	if f, ok := in.(*os.File); ok {
		info, err := f.Stat()
		pos, serr := f.Seek(0, io.SeekCurrent)
		if err == nil && serr == nil && info.Mode().IsRegular() {
			lr.file, lr.pos = f, pos
		}
	}
	return lr
}

// next returns the next line, without its newline, or io.EOF after the
// last one. A read error ends the lines at once.
func (lr *lineReader) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.r:lr.w], '\n'); i >= 0 {
			line := bytes.Clone(lr.buf[lr.r : lr.r+i])
			lr.r += i + 1
			return line, nil
		}
		switch {
		case lr.err == io.EOF && lr.r < lr.w: // the last line has no newline
			line := bytes.Clone(lr.buf[lr.r:lr.w])
			lr.r = lr.w
			return line, nil
		case lr.err != nil:
			return nil, lr.err
		case lr.r == 0 && lr.w == len(lr.buf):
			return lr.long()
		case lr.w == len(lr.buf):
			lr.w = copy(lr.buf, lr.buf[lr.r:lr.w])
			lr.r = 0
		}
		lr.fill()
	}
}

// fill reads once into the free end of the buffer.
func (lr *lineReader) fill() {
	n, err := lr.in.Read(lr.buf[lr.w:])
	lr.w += n
	lr.pos += int64(n)
	if err != nil {
		lr.err = err
	}
}

// long returns the line that fills the buffer and goes on past it.
func (lr *lineReader) long() ([]byte, error) {
	start := lr.pos - int64(lr.w) // the line's input offset
	var held *spill               // from a pipe: the line so far
	if lr.file == nil {
		held = newSpill()
		defer held.close()
		if err := held.add(lr.buf); err != nil {
			return nil, err
		}
	}
	for {
		lr.r, lr.w = 0, 0
		lr.fill()
		end := bytes.IndexByte(lr.buf[:lr.w], '\n')
		switch {
		case end >= 0:
			lr.r = end + 1
		case lr.err == io.EOF:
			end, lr.r = lr.w, lr.w
		case lr.err != nil:
			return nil, lr.err
		default:
			if held != nil {
				if err := held.add(lr.buf[:lr.w]); err != nil {
					return nil, err
				}
			}
			continue
		}
		if held != nil {
			if err := held.add(lr.buf[:end]); err != nil {
				return nil, err
			}
			return held.line()
		}
		line := make([]byte, lr.pos-int64(lr.w)+int64(end)-start)
		if _, err := lr.file.ReadAt(line, start); err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the input file shrank while it was read")
			}
			return nil, err
		}
		return line, nil
	}
}

// spill holds a long line from a pipe until its end is found: in an
// unlinked temporary file, so that the process holds the line once, in the
// storage line reads it into (the copy sits in the page cache, and the
// pages of an unlinked file are dropped when it is closed); or, when no
// temporary file can be made, in memory, in chunks joined at the end,
// twice the line for a moment.
type spill struct {
	file   *os.File // nil: chunks
	chunks [][]byte
	size   int
}

func newSpill() *spill {
	f, err := os.CreateTemp("", "demo-replay-line-")
	if err != nil {
		return &spill{}
	}
	os.Remove(f.Name()) // where an open file cannot be removed, close does it
	return &spill{file: f}
}

func (s *spill) add(p []byte) error {
	s.size += len(p)
	if s.file == nil {
		s.chunks = append(s.chunks, bytes.Clone(p))
		return nil
	}
	_, err := s.file.Write(p)
	return err
}

// line returns what was added, in storage of its size.
func (s *spill) line() ([]byte, error) {
	line := make([]byte, s.size)
	if s.file != nil {
		_, err := s.file.ReadAt(line, 0)
		return line, err
	}
	n := 0
	for _, c := range s.chunks {
		n += copy(line[n:], c)
	}
	// The chunks are garbage now, as large as the line: their pages go
	// back before the line is handed on.
	s.chunks = nil
	debug.FreeOSMemory()
	return line, nil
}

func (s *spill) close() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
	}
}
