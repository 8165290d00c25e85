package fslocal

import (
	"bytes"
	"context"
	"io"
	"os"
	"unicode/utf8"
	"unsafe"

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
	held  int64 // files, and results, above this many bytes stream
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
// chunks, normalises CRLF to LF, matches old across chunk boundaries (see
// matcher), and writes the result in the file's dominant style as it goes.
// The style comes from a first read of the sample, since nothing can be
// written before it is known.
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

	// The arguments are only read: viewed, not copied, since either may be
	// as large as the file (old_string is copied if it has a CRLF to
	// normalise; new_string is normalised as it is written).
	m := matcher{old: unsafeBytes(lf(edit.Old)), repl: unsafeBytes(edit.New), all: edit.ReplaceAll, out: out}
	buf := make([]byte, 1+chunk) // a carried '\r' and one chunk
	var text utf8Stream
	carriedCR, invalid, eof := false, false, false
	for !eof {
		if err := ctx.Err(); err != nil {
			return 0, fs.Aborted("edit", err)
		}
		n := 0
		if carriedCR {
			buf[0], n = '\r', 1
		}
		k, err := file.ReadAt(buf[n:n+chunk], off)
		switch {
		case err == io.EOF:
			eof = true
		case err != nil:
			return 0, osError("edit", path, err)
		}
		read := buf[n : n+k]
		if bytes.IndexByte(read, 0) >= 0 {
			return 0, binaryFile("edit", path)
		}
		off += int64(k)
		if invalid {
			continue // only the NUL check is left
		}
		if !text.valid(read, eof) {
			invalid = true
			out.stop()
			continue
		}
		n = len(lfInPlace(buf[:n+k]))
		// A '\r' that ends the chunk may be half of a CRLF: it waits.
		if carriedCR = !eof && n > 0 && buf[n-1] == '\r'; carriedCR {
			n--
		}
		m.feed(buf[:n])
	}
	if invalid {
		return 0, invalidText("edit", path)
	}
	m.end()
	if err := matchError(path, m.n, edit.ReplaceAll); err != nil {
		return 0, err
	}
	if out.flush(); out.err != nil {
		return 0, out.err
	}
	return m.n, nil
}

// matcher finds old in a text given in pieces and writes the text, with
// the matches replaced, to out: non-overlapping matches from the left, as
// strings.Index finds them, counted past the first of a unique edit.
//
// Between pieces it keeps only what a match may still need: the longest
// end of the unwritten text that old begins with. Those bytes are old's
// own, so it keeps their number (held), not a copy: an old_string as
// large as the file costs no second copy of it. Finding the next such end
// after a failed match is a search of old for its borders, which a
// periodic old can make quadratic; past a budget linear in the bytes
// involved, the matcher keeps the bytes themselves instead (win), and a
// piece is searched behind them, as a window.
type matcher struct {
	old, repl []byte // repl is not LF-normalised (see editWriter.putLF)
	all       bool
	out       *editWriter
	n         int    // matches
	held      int    // the unwritten text is old[:held] ...
	win       []byte // ... or, past the budget, win
	budget    int    // bytes left to compare in this piece's border searches
}

// feed matches b, the next piece of the text.
func (m *matcher) feed(b []byte) {
	if len(m.old) == 0 {
		return // matches nothing: the edit fails, unwritten
	}
	m.budget = 2 * (len(b) + m.held + len(m.win))
	if m.held > 0 {
		if b = m.extend(b); b == nil {
			return
		}
	}
	text := b
	if len(m.win) > 0 {
		m.win = append(m.win, b...)
		text = m.win
	}
	written := 0
	for {
		i := bytes.Index(text[written:], m.old)
		if i < 0 {
			break
		}
		m.match(text[written : written+i])
		written += i + len(m.old)
	}
	// No match starts before from: the rest waits for the next piece, as
	// old[:held] when old begins with it, else as bytes.
	from := max(written, len(text)-len(m.old)+1)
	m.out.put(text[written:from])
	rest := text[from:]
	p, ok := m.viable(rest, 0)
	m.out.put(rest[:p])
	if ok {
		m.held, m.win = len(rest)-p, nil
		return
	}
	if len(m.win) > 0 {
		m.win = m.win[:copy(m.win, rest[p:])]
	} else {
		m.win = append(m.win, rest[p:]...)
	}
}

// extend goes on with the unwritten old[:held] into b. It returns the part
// of b still to search (with any bytes kept before it in win), or nil when
// b only made held longer.
func (m *matcher) extend(b []byte) []byte {
	for m.held > 0 {
		need := len(m.old) - m.held
		k := min(need, len(b))
		d := commonPrefix(b[:k], m.old[m.held:])
		m.budget -= d
		switch {
		case d == need:
			m.held = 0
			m.match(nil)
			return b[d:]
		case d == len(b):
			m.held += d
			return nil
		}
		// The candidate fails at b[d]: the text before is old[:held+d], and
		// the next candidate starts in it or in b[d:].
		known := m.old[:m.held+d]
		p, ok := m.viable(known, 1)
		m.out.put(known[:p])
		b = b[d:]
		if !ok {
			m.held, m.win = 0, append(m.win[:0], known[p:]...)
			return b
		}
		m.held = len(known) - p
	}
	return b
}

// viable returns the first p >= from at which old begins with text[p:]
// (len(text) if none), and false if the budget ran out first, p then
// being the first candidate not ruled out.
func (m *matcher) viable(text []byte, from int) (int, bool) {
	for p := from; p < len(text); p++ {
		i := bytes.IndexByte(text[p:], m.old[0])
		if i < 0 {
			break
		}
		p += i
		if m.budget < 0 {
			return p, false
		}
		d := commonPrefix(text[p:], m.old)
		m.budget -= d + 1
		if p+d == len(text) {
			return p, true
		}
	}
	return len(text), true
}

// match writes the text before a match, then the replacement: for the
// first match, or for every one of a replace_all. A second match of a
// unique edit stops the writing.
func (m *matcher) match(before []byte) {
	m.out.put(before)
	if m.n++; m.n == 1 || m.all {
		m.out.putLF(m.repl)
	} else {
		m.out.stop()
	}
}

// end writes what waited for a match that never came.
func (m *matcher) end() {
	m.out.put(m.old[:m.held])
	m.out.put(m.win)
}

// commonPrefix is the length of the longest common prefix of a and b. It
// compares blocks of doubling size, so that its cost follows the length
// found rather than the inputs'.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i, w := 0, 16
	for i < n {
		w = min(w, n-i)
		if !bytes.Equal(a[i:i+w], b[i:i+w]) {
			break
		}
		i += w
		w = min(2*w, 4096)
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// utf8Stream checks that text given in pieces is valid UTF-8: the start of
// a rune that a piece cuts waits in tail for the next one.
type utf8Stream struct {
	tail [utf8.UTFMax]byte
	n    int
}

// valid reports whether b, after the pieces before it, is still valid
// UTF-8; at eof a rune left cut is not.
func (s *utf8Stream) valid(b []byte, eof bool) bool {
	if s.n > 0 {
		k := copy(s.tail[s.n:], b)
		r := s.tail[:s.n+k]
		if !utf8.FullRune(r) {
			s.n += k
			return !eof
		}
		_, size := utf8.DecodeRune(r)
		if !utf8.Valid(r[:size]) {
			return false
		}
		b, s.n = b[size-s.n:], 0
	}
	t := 0
	if !eof {
		t = incompleteTail(b)
	}
	s.n = copy(s.tail[:], b[len(b)-t:])
	return utf8.Valid(b[:len(b)-t])
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

// put appends text, with every "\n" as "\r\n" in the CRLF style. A text
// of writeChunk bytes or more (a large replacement, or old_string's own
// bytes) is written as it is, not copied into buf.
func (w *editWriter) put(text []byte) {
	if w.s == nil {
		return
	}
	if len(text) >= writeChunk {
		w.flush()
		if w.s != nil {
			w.write(unsafeString(text), w.crlf)
		}
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

// putLF is put of lf(text), without a copy of text.
func (w *editWriter) putLF(text []byte) {
	for w.s != nil {
		i := bytes.Index(text, crlfBytes)
		if i < 0 {
			w.put(text)
			return
		}
		w.put(text[:i])
		text = text[i+1:] // from the '\n'
	}
}

// flush writes what is buffered. The string view of buf ends with the
// call: buf is reused after it.
func (w *editWriter) flush() {
	if w.s == nil || len(w.buf) == 0 {
		return
	}
	w.write(unsafeString(w.buf), false)
	w.buf = w.buf[:0]
}

// write writes text to the staging file; a failure stops the writing.
func (w *editWriter) write(text string, crlf bool) {
	if err := w.s.write(w.ctx, crlf, text); err != nil {
		w.err = err
		w.stop()
	}
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

// unsafeBytes views s as a byte slice without copying; the slice must
// never be written.
func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
