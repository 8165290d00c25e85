package toolsearch

import (
	"bytes"
	"context"
	"io"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/gordis-run/gordis/plugins/fs"
)

// scanner matches the lines of one file at a time; it is shared by the
// workers and holds no per-file state.
type scanner struct {
	m lineMatcher
	// raw: the reader yields the bytes as stored (a Walker's), so the
	// scanner sniffs the BOM itself; otherwise it yields the generic
	// walk's decoded text, BOM already hidden.
	raw bool
	// maxBytes stops a file whose lines alone pass the raw-output cap:
	// the collector then reports the overflow.
	maxBytes int64
}

// lineMatcher finds the first line of a run of whole '\n'-separated lines
// that holds a match: its bounds without the '\n', or -1, -1.
// *rustregex.Matcher is the one grep uses.
type lineMatcher interface {
	FindLine(text []byte) (start, end int)
}

// chunkSize is the read buffer: large enough that matching runs over many
// lines per call, small enough that every worker holds one.
const chunkSize = 256 << 10

var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// invalidLine stands for a matched line that is not valid UTF-8, in the
// text and in the value.
const invalidLine = "(line is not valid UTF-8)"

// file opens and searches j's file. A binary file (a NUL byte, or text the
// generic walk refuses to decode) is searched but yields no line, unless
// it is the root itself.
func (sc *scanner) file(ctx context.Context, j *fileJob) {
	if err := ctx.Err(); err != nil {
		j.err = err
		return
	}
	rc, err := j.entry.Open(ctx)
	if err != nil {
		if fs.CodeOf(err) == fs.CodeNotText {
			j.searched = true
		} else {
			j.err = err
		}
		return
	}
	defer rc.Close()
	j.searched = true
	binary, err := sc.search(ctx, rc, j)
	if err != nil && fs.CodeOf(err) != fs.CodeNotText {
		j.err = err
	} else if binary || err != nil {
		j.lines, j.size = j.lines[:0], 0
	}
}

// search reads r in chunks, splits them only after their last '\n' and
// matches each run of whole lines at once. It reports a NUL byte anywhere
// in a file that is not the root (ripgrep stops at one in its first 64 KiB
// and reports the earlier lines of a later one; skipping the whole file is
// the port's simpler choice).
func (sc *scanner) search(ctx context.Context, r io.Reader, j *fileJob) (binary bool, err error) {
	bp := chunks.Get().(*[]byte)
	defer chunks.Put(bp)
	return sc.read(ctx, r, j, *bp)
}

// read is search with buf as its first buffer.
func (sc *scanner) read(ctx context.Context, r io.Reader, j *fileJob, buf []byte) (binary bool, err error) {
	carry, line, unchecked := 0, 1, 0
	sniff := sc.raw
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		n, err := io.ReadFull(r, buf[carry:])
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return false, err
		}
		data := buf[:carry+n]
		if sniff {
			sniff = false
			var skip int
			if r, skip = decoding(data, r, eof); skip < 0 {
				continue // transcoding: read again, from the start
			}
			data = data[skip:]
		}
		if !j.explicit && bytes.IndexByte(data[unchecked:], 0) >= 0 {
			return true, nil
		}
		end := len(data)
		if !eof {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				// One line fills the buffer: grow it to hold the line.
				grown := make([]byte, 2*len(buf))
				carry = copy(grown, data)
				buf, unchecked = grown, carry
				continue
			}
			end = i + 1
		}
		var full bool
		if line, full = sc.lines(data[:end], line, j); full || eof {
			return false, nil
		}
		carry = copy(buf, data[end:])
		unchecked = carry
	}
}

// decoding looks for a byte-order mark at the start of a file, as rg
// does: a UTF-8 one is skipped (skip 3), a UTF-16 one switches to a reader
// that transcodes the rest of the file, head first, to UTF-8 (skip -1).
func decoding(head []byte, r io.Reader, eof bool) (io.Reader, int) {
	var order unicode.Endianness
	switch {
	case bytes.HasPrefix(head, bomUTF8):
		return r, len(bomUTF8)
	case bytes.HasPrefix(head, bomUTF16LE):
		order = unicode.LittleEndian
	case bytes.HasPrefix(head, bomUTF16BE):
		order = unicode.BigEndian
	default:
		return r, 0
	}
	src := io.Reader(bytes.NewReader(bytes.Clone(head[2:])))
	if !eof {
		src = io.MultiReader(src, r)
	}
	return transform.NewReader(src, unicode.UTF16(order, unicode.IgnoreBOM).NewDecoder()), -1
}

// lines matches whole, a run of whole lines (the last one may lack its
// '\n' at the end of the file) whose first line is number line, and
// returns the number of the line after it. full reports that j's lines
// passed the raw-output cap, so the rest of the file does not matter.
func (sc *scanner) lines(whole []byte, line int, j *fileJob) (next int, full bool) {
	for off := 0; off < len(whole); {
		start, end := sc.m.FindLine(whole[off:])
		if start < 0 {
			return line + bytes.Count(whole[off:], []byte{'\n'}), false
		}
		line += bytes.Count(whole[off:off+start], []byte{'\n'})
		text := whole[off+start : off+end]
		off += end
		if off < len(whole) {
			// The '\n' ends the line, and one '\r' before it goes too.
			off++
			text = bytes.TrimSuffix(text, []byte{'\r'})
		}
		j.add(line, text)
		if j.size > sc.maxBytes {
			return line, true
		}
		line++
	}
	return line, false
}

func (j *fileJob) add(number int, text []byte) {
	s := invalidLine
	if utf8.Valid(text) {
		s = string(text)
	}
	j.lines = append(j.lines, foundLine{number: number, text: s})
	j.size += int64(len(s))
}
