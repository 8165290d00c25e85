package toolfs

import (
	"bytes"
	"strconv"
)

// Line is one numbered line of a read window.
type Line struct {
	Number int    `json:"number"`
	Text   string `json:"text"`
}

// windowCaps are the configured read limits.
type windowCaps struct {
	maxRunes int // characters kept per line before the truncation suffix
	maxBytes int // UTF-8 bytes of the selected lines, separators included
}

// window turns decoded text, fed in chunks of any size, into one page of
// numbered lines. Lines end at "\n" only; one trailing "\r" is dropped; a
// trailing newline adds no line. It holds only the page and one line buffer
// capped at maxRunes+1 characters, so a newline-free giant line costs no
// more memory than a short one. Lines outside the page are only counted
// (with bytes.Count/IndexByte), never copied.
type window struct {
	caps          windowCaps
	offset, limit int

	line    int   // number of the line being scanned, 1-based
	pos     int64 // decoded-text offset of the next byte fed
	partial bool  // bytes of the current line have been fed

	buf      []byte // the current page line, capped at maxRunes+1 runes
	bufRunes int
	bufFull  bool // the cap was reached: ignore the rest of the line

	lines []Line
	used  int  // bytes charged against maxBytes
	full  bool // the page is complete: limit reached or byte cap hit

	index *indexBuilder // records line positions on a full scan; may be nil
}

// newWindow starts a window at line `line` whose first byte is at decoded
// offset pos: line 1 at 0 for a whole scan, or a cached index position.
func newWindow(caps windowCaps, offset, limit, line int, pos int64, index *indexBuilder) *window {
	w := &window{caps: caps, offset: offset, limit: limit, line: line, pos: pos, index: index}
	w.atLineStart()
	return w
}

func (w *window) collecting() bool { return !w.full && w.line >= w.offset }

// feed consumes the next chunk of text.
func (w *window) feed(chunk []byte) {
	for len(chunk) > 0 {
		if w.collecting() {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				w.appendCapped(chunk)
				w.partial = true
				w.pos += int64(len(chunk))
				return
			}
			w.appendCapped(chunk[:i])
			w.pos += int64(i + 1)
			chunk = chunk[i+1:]
			w.endLine()
			continue
		}
		target := w.nextStop()
		if target == 0 { // nothing left to record: just count
			w.line += bytes.Count(chunk, newline)
			w.partial = chunk[len(chunk)-1] != '\n'
			w.pos += int64(len(chunk))
			return
		}
		i, found := nthNewline(chunk, target-w.line)
		if i < 0 {
			w.line += found
			w.partial = chunk[len(chunk)-1] != '\n'
			w.pos += int64(len(chunk))
			return
		}
		w.line = target
		w.partial = false
		w.pos += int64(i + 1)
		chunk = chunk[i+1:]
		w.atLineStart()
	}
}

var newline = []byte{'\n'}

// feedCounted consumes a chunk known to hold n newlines. A chunk in which
// the window has nothing to collect or record is only counted, without a
// look at its bytes; any other is fed.
func (w *window) feedCounted(chunk []byte, n int) {
	if len(chunk) == 0 {
		return
	}
	if !w.collecting() {
		// Line `stop` starts after the (stop-w.line)-th newline from here.
		if stop := w.nextStop(); stop == 0 || n < stop-w.line {
			w.line += n
			w.partial = chunk[len(chunk)-1] != '\n'
			w.pos += int64(len(chunk))
			return
		}
	}
	w.feed(chunk)
}

// nextStop is the next line start the scan must notice while skipping or
// counting: the page's first line, or the next index boundary; 0 if none.
func (w *window) nextStop() int {
	stop := 0
	if !w.full && w.line < w.offset {
		stop = w.offset
	}
	if w.index != nil {
		if b := w.index.next(w.line); stop == 0 || b < stop {
			stop = b
		}
	}
	return stop
}

func (w *window) atLineStart() {
	if w.index != nil {
		w.index.mark(w.line, w.pos)
	}
}

// appendCapped adds a line fragment, keeping at most maxRunes+1 characters.
// Runes are counted by their leading bytes, so a character split across
// chunks is counted once and never cut (the text is valid UTF-8).
func (w *window) appendCapped(seg []byte) {
	if w.bufFull {
		return
	}
	for i, c := range seg {
		if c&0xC0 != 0x80 {
			if w.bufRunes > w.caps.maxRunes {
				seg, w.bufFull = seg[:i], true
				break
			}
			w.bufRunes++
		}
	}
	w.buf = append(w.buf, seg...)
}

// endLine completes the current page line (at a newline or at the end).
func (w *window) endLine() {
	text, runes := w.buf, w.bufRunes
	if n := len(text); n > 0 && text[n-1] == '\r' {
		// The buffer is capped before this strip, so a "\r" that happens to be
		// character maxRunes+1 of a longer line also goes (as upstream).
		text, runes = text[:n-1], runes-1
	}
	var s string
	if runes > w.caps.maxRunes {
		s = string(text[:runeOffset(text, w.caps.maxRunes)]) + "... (line truncated to " + strconv.Itoa(w.caps.maxRunes) + " chars)"
	} else {
		s = string(text)
	}
	cost := len(s)
	if len(w.lines) > 0 {
		cost++ // the separator
	}
	if w.used+cost > w.caps.maxBytes {
		w.full = true // the byte cap ends the page
	} else {
		w.used += cost
		w.lines = append(w.lines, Line{Number: w.line, Text: s})
		w.full = len(w.lines) >= w.limit
	}
	w.buf, w.bufRunes, w.bufFull = w.buf[:0], 0, false
	w.line++
	w.partial = false
	w.atLineStart()
}

// runeOffset is the byte offset of the n-th character of valid UTF-8 text.
func runeOffset(b []byte, n int) int {
	for i, c := range b {
		if c&0xC0 != 0x80 {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return len(b)
}

// finish ends the text and returns the exact total number of lines.
func (w *window) finish() int {
	if w.partial && w.collecting() {
		w.endLine()
	}
	total := w.line - 1
	if w.partial {
		total++
	}
	return total
}

// nthNewline returns the index of the n-th newline in b (n ≥ 1), or -1 and
// the number of newlines b holds. It counts in blocks so that finding many
// nearby targets in one large chunk stays linear.
func nthNewline(b []byte, n int) (int, int) {
	const block = 4096
	found, base := 0, 0
	for base < len(b) {
		blk := b[base:min(base+block, len(b))]
		c := bytes.Count(blk, newline)
		if found+c < n {
			found += c
			base += len(blk)
			continue
		}
		for {
			i := bytes.IndexByte(blk, '\n')
			found++
			if found == n {
				return base + i, n
			}
			base += i + 1
			blk = blk[i+1:]
		}
	}
	return -1, found
}
