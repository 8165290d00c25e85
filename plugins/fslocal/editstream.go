package fslocal

import (
	"bytes"
	"context"
	"io"
	"os"
	"unicode/utf8"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

const (
	// maxHeldText is the largest file, or edit result, that an edit or a
	// replacing write holds in memory. Above it an edit streams and a write
	// reports no Before (the outcomes' Omitted), so the memory of one call
	// does not grow with the file. An edit of a CRLF file holds it about
	// three times (as read, LF-normalised, and the result): 16 MiB came
	// within 3 MiB of a 64 MiB peak RSS, 12 MiB leaves room.
	maxHeldText = 12 << 20
	// streamChunk is how much of the file a streamed edit reads at a time.
	streamChunk = 1 << 20
	// headLen covers a BOM, the line-ending sample (eolSample UTF-16 units
	// of at most 3 bytes each) and the rune that may end it.
	headLen = 3 + 3*eolSample + utf8.UTFMax
)

// editConfig is where an edit stops holding the file and how it streams.
type editConfig struct {
	held  int64 // files, and replace_all results, above this many bytes stream
	chunk int   // bytes read at a time when streaming
}

var defaultEdit = editConfig{held: maxHeldText, chunk: streamChunk}

// streamEdit is the edit of a file too large to hold, or whose result
// would be: it streams the result into the staging file (see
// streamResult), closes file (whose stat is read) and commits. Its
// outcome is Omitted.
func (f *FS) streamEdit(ctx context.Context, t fs.Target, file *os.File, read *confine.Stat, mode uint32, edit fs.EditRequest, staged *pendingStage, chunk int) (*fs.EditOutcome, error) {
	n, err := streamResult(ctx, t.Path, file, edit, staged, chunk)
	file.Close() // before the rename (see staging.commit)
	if err != nil {
		return nil, err
	}
	s, _ := staged.wait()
	s.read = read
	if err := s.commit(ctx, t, mode); err != nil {
		return nil, err
	}
	return &fs.EditOutcome{Replacements: n, Version: f.postVersion(t), Omitted: true}, nil
}

// streamResult writes the result of edit on file to the staging file, as
// the in-memory path would store it, byte for byte: it reads file in
// chunks, normalises CRLF to LF, matches old across chunk boundaries (a
// match can only start in the last len(old)-1 bytes a chunk leaves
// unsearched, which are carried to the next one), and writes the result in
// the file's dominant style as it goes. The style comes from a first read
// of the sample, since nothing can be written before it is known.
//
// It reads to the end even once the outcome is a failure, because the
// failures keep the contract's order: a NUL anywhere (returned at once),
// then invalid UTF-8, then no match, then a second match of a unique edit
// (which stops the writing: that staging file is never committed), and
// only then a failure of the staging itself. It returns the number of
// replacements.
func streamResult(ctx context.Context, path string, file *os.File, edit fs.EditRequest, staged *pendingStage, chunk int) (int, error) {
	head := make([]byte, headLen)
	h, err := file.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return 0, osError("edit", path, err)
	}
	head = head[:h]
	out := &editWriter{ctx: ctx}
	if out.s, out.err = staged.wait(); out.err != nil {
		out.s = nil
	}
	var off int64
	if bytes.HasPrefix(head, bom) {
		off = int64(len(bom))
	}
	out.crlf = dominantCRLF(unsafeString(head[off:]))
	out.put(head[:off])

	old, repl := []byte(lf(edit.Old)), []byte(lf(edit.New))
	// buf[:n] is LF-normalised text not yet written. Between chunks it is
	// only what a match may still need (< len(old) bytes) or a rune start
	// not yet validated (< utf8.UTFMax); a carried '\r' and one chunk
	// follow it.
	buf := make([]byte, max(len(old), utf8.UTFMax)+chunk)
	n := 0
	scan, written, valid := 0, 0, 0 // offsets in buf: search from, written up to, valid UTF-8 up to
	replacements := 0
	carriedCR, invalid, eof := false, false, false
	for !eof {
		if err := ctx.Err(); err != nil {
			return 0, fs.Aborted("edit", err)
		}
		start := n
		if carriedCR {
			buf[n], n = '\r', n+1
		}
		k, err := file.ReadAt(buf[n:n+chunk], off)
		switch {
		case err == io.EOF:
			eof = true
		case err != nil:
			return 0, osError("edit", path, err)
		}
		if bytes.IndexByte(buf[n:n+k], 0) >= 0 {
			return 0, binaryFile("edit", path)
		}
		off += int64(k)
		n = start + len(lfInPlace(buf[start:n+k]))
		// A '\r' that ends the chunk may be half of a CRLF: it waits.
		if carriedCR = !eof && n > start && buf[n-1] == '\r'; carriedCR {
			n--
		}
		if invalid {
			n = 0 // only the NUL check is left
			continue
		}
		tail := 0
		if !eof {
			tail = incompleteTail(buf[valid:n])
		}
		if !utf8.Valid(buf[valid : n-tail]) {
			invalid, n = true, 0
			out.stop()
			continue
		}
		valid = n - tail

		for len(old) > 0 {
			i := bytes.Index(buf[scan:n], old)
			if i < 0 {
				break
			}
			at := scan + i
			if replacements++; replacements == 1 || edit.ReplaceAll {
				out.put(buf[written:at])
				out.put(repl)
			} else {
				out.stop()
			}
			scan = at + len(old)
			written = scan
		}
		// Everything before keep is searched and validated: write it out and
		// keep the rest for the next chunk.
		keep := n
		if !eof {
			keep = min(max(scan, n-len(old)+1), valid)
		}
		if keep > written {
			out.put(buf[written:keep])
			written = keep
		}
		n = copy(buf, buf[keep:n])
		scan, written, valid = max(scan-keep, 0), written-keep, valid-keep
	}
	if invalid {
		return 0, invalidText("edit", path)
	}
	if err := matchError(path, replacements, edit.ReplaceAll); err != nil {
		return 0, err
	}
	if out.flush(); out.err != nil {
		return 0, out.err
	}
	return replacements, nil
}

// editWriter buffers a streamed edit's result, in the file's line-ending
// style, and writes it to the staging file writeChunk bytes at a time. The
// first failure stops the writing and is kept in err, since it is reported
// only if the edit itself succeeds.
type editWriter struct {
	ctx  context.Context
	s    *staging // nil once the writing stopped
	crlf bool
	buf  []byte
	err  error
}

// put appends text, with every "\n" as "\r\n" in the CRLF style.
func (w *editWriter) put(text []byte) {
	if w.s == nil {
		return
	}
	if w.buf == nil {
		w.buf = make([]byte, 0, 2*writeChunk)
	}
	for w.crlf {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		w.buf = append(append(w.buf, text[:i]...), '\r', '\n')
		text = text[i+1:]
	}
	w.buf = append(w.buf, text...)
	if len(w.buf) >= writeChunk {
		w.flush()
	}
}

// flush writes what is buffered. The string view of buf ends with the
// call: buf is reused after it.
func (w *editWriter) flush() {
	if w.s == nil || len(w.buf) == 0 {
		return
	}
	if err := w.s.write(w.ctx, false, unsafeString(w.buf)); err != nil {
		w.err = err
		w.stop()
	}
	w.buf = w.buf[:0]
}

// stop ends the writing; the staging file is then discarded, never
// committed.
func (w *editWriter) stop() { w.s, w.buf = nil, nil }

// lfInPlace rewrites b with every "\r\n" as "\n" and returns the shortened
// slice, like lf without a copy.
func lfInPlace(b []byte) []byte {
	w := bytes.Index(b, crlfBytes)
	if w < 0 {
		return b
	}
	r := w + 1 // the '\n' of the pair: what is kept starts there
	for {
		i := bytes.Index(b[r:], crlfBytes)
		if i < 0 {
			return b[:w+copy(b[w:], b[r:])]
		}
		w += copy(b[w:], b[r:r+i])
		r += i + 1
	}
}

var crlfBytes = []byte("\r\n")
