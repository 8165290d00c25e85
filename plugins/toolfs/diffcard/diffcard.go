// Package diffcard renders the change a write or an edit made to a file as
// a unified diff for a person to read: the card a transcript or a review
// screen shows under the call.
//
// A card costs time linear in the size of the texts and memory bounded by
// what it shows (plus one copy of a text that lacks a final newline): the
// unchanged lines before and after the change are found by a scan of the
// bytes and never split into lines, the changed middle is aligned line by
// line only while that stays cheap, and the card shows at most MaxLines
// lines of at most MaxLineBytes bytes each. Where a bound changes what is
// shown, the card says so in a line in parentheses.
package diffcard

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

const (
	// Context is how many unchanged lines a card shows around each change,
	// as diff -u does.
	Context = 3
	// MaxLines bounds the lines of diff a card shows; the rest is counted.
	MaxLines = 500
	// MaxLineBytes bounds each shown line; a longer one is cut at a rune
	// boundary and ends with the number of bytes left out.
	MaxLineBytes = 1000
)

// Bounds on the line alignment of the changed middle. Its cost is about
// (lines of the middle) × (lines changed) comparisons and (lines changed)²
// words of memory; past either bound the middle is shown as one
// replacement, still a correct diff, just not a minimal one.
const (
	maxEdits         = 1024    // lines removed plus lines added
	maxAlignLines    = 1 << 18 // lines of the middle, before and after together
	maxAlignCompares = 1 << 24 // line comparisons
)

// Change is what one write or edit did to a file.
type Change struct {
	// Name is the file as the reader should see it, on the --- and +++
	// lines (a path relative to the workspace, say).
	Name string
	// Before and After are the file's texts, LF-normalised; Before is ""
	// for a created file.
	Before, After string
	// Omitted reports that the tool did not keep the texts because the
	// file was too large: the card says so instead of showing a diff.
	Omitted bool
}

// Render returns the card for c: "" when Before and After have the same
// lines (a missing final newline is not a change), else a unified diff
// with Context lines of context. Lines in parentheses are notes that are
// not part of the diff: a file too large to diff, lines left out, a
// change shown as one replacement.
func Render(c Change) string {
	header := "--- " + c.Name + "\n+++ " + c.Name + "\n"
	if c.Omitted {
		return header + "(too large to show a diff)\n"
	}
	s, replaced := align(c.Before, c.After)
	if s.empty() {
		return ""
	}
	w := cardWriter{left: MaxLines}
	w.b.WriteString(header)
	s.writeHunks(&w)
	if w.cut > 0 {
		fmt.Fprintf(&w.b, "(%d more lines not shown)\n", w.cut)
	}
	if replaced {
		w.b.WriteString("(the changed lines are shown as one replacement: aligning them line by line would cost too much)\n")
	}
	return w.b.String()
}

// withNewline ends a non-empty text with a newline, so that every line of
// it, the last one included, is a run of bytes ending in '\n'.
func withNewline(s string) string {
	if s != "" && s[len(s)-1] != '\n' {
		return s + "\n"
	}
	return s
}

// script is an edit script from a to b over a window of their lines: the
// unchanged lines of the window's ends (at most Context of them) and
// either the aligned ops of the changed middle or, when the middle was too
// large to align, its two halves as one replacement.
type script struct {
	firstLine int    // number of lines of both texts before the window
	head      string // unchanged lines before the middle
	ops       []op   // the aligned middle, or nil
	del, ins  string // the middle as a replacement, when ops is nil
	tail      string // unchanged lines after the middle
}

type op struct {
	kind byte // ' ', '-' or '+'
	text string
}

func (s *script) empty() bool { return s.ops == nil && s.del == "" && s.ins == "" }

// align finds the common prefix and suffix of whole lines with a scan of
// the bytes, then aligns the middle between them when the bounds allow;
// replaced reports that they did not.
func align(before, after string) (s *script, replaced bool) {
	a, b := withNewline(before), withNewline(after)
	pre := commonPrefix(a, b)
	pre = strings.LastIndexByte(a[:pre], '\n') + 1 // back to a line start
	suf := commonSuffix(a[pre:], b[pre:])
	endA, endB := len(a)-suf, len(b)-suf
	if suf > 0 && ((endA > 0 && a[endA-1] != '\n') || (endB > 0 && b[endB-1] != '\n')) {
		// The common bytes start inside a line: the suffix starts after it.
		endA += strings.IndexByte(a[endA:], '\n') + 1
		endB = len(b) - (len(a) - endA)
	}
	headStart := lastLines(a[:pre], Context)
	s = &script{
		firstLine: strings.Count(a[:headStart], "\n"),
		head:      a[headStart:pre],
		del:       a[pre:endA],
		ins:       b[pre:endB],
		tail:      a[endA : endA+firstLines(a[endA:], Context)],
	}
	if s.del == "" || s.ins == "" {
		return s, false // a pure insertion or deletion needs no alignment
	}
	n, m := strings.Count(s.del, "\n"), strings.Count(s.ins, "\n")
	if n+m > maxAlignLines {
		return s, true
	}
	limit := min(n+m, maxEdits, maxAlignCompares/(n+m))
	ops, ok := myers(splitLines(s.del), splitLines(s.ins), limit)
	if !ok {
		return s, true
	}
	s.ops, s.del, s.ins = ops, "", ""
	return s, false
}

// commonPrefix is the length of the longest common prefix of a and b. It
// compares blocks first, which the runtime does many bytes at a time.
func commonPrefix(a, b string) int {
	const block = 4096
	n := min(len(a), len(b))
	i := 0
	for i+block <= n && a[i:i+block] == b[i:i+block] {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b string) int {
	const block = 4096
	n := min(len(a), len(b))
	i := 0
	for i+block <= n && a[len(a)-i-block:len(a)-i] == b[len(b)-i-block:len(b)-i] {
		i += block
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// lastLines returns where the last n lines of s start; s is empty or ends
// in a newline.
func lastLines(s string, n int) int {
	end := len(s)
	for ; n > 0 && end > 0; n-- {
		end = strings.LastIndexByte(s[:end-1], '\n') + 1
	}
	return end
}

// firstLines returns the length of the first n lines of s; s is empty or
// ends in a newline.
func firstLines(s string, n int) int {
	end := 0
	for ; n > 0 && end < len(s); n-- {
		end += strings.IndexByte(s[end:], '\n') + 1
	}
	return end
}

// splitLines splits text ending in a newline into its lines, without it.
func splitLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// writeHunks writes the script as hunks: changes at most 2×Context
// unchanged lines apart share one.
func (s *script) writeHunks(w *cardWriter) {
	if s.ops == nil {
		// One replacement: a single hunk, written without splitting the
		// middle into lines.
		h, t := strings.Count(s.head, "\n"), strings.Count(s.tail, "\n")
		w.hunkHeader(s.firstLine, h+strings.Count(s.del, "\n")+t, s.firstLine, h+strings.Count(s.ins, "\n")+t)
		w.lines(' ', s.head)
		w.lines('-', s.del)
		w.lines('+', s.ins)
		w.lines(' ', s.tail)
		return
	}
	ops := make([]op, 0, 2*Context+len(s.ops))
	ops = appendLines(ops, ' ', s.head)
	ops = append(ops, s.ops...)
	ops = appendLines(ops, ' ', s.tail)
	oldLine, newLine := s.firstLine, s.firstLine // lines before ops[done]
	for done := 0; done < len(ops); {
		first := done
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			return
		}
		last := first
		for k := first; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				last = k
			} else if k-last > 2*Context {
				break
			}
		}
		lo, hi := max(first-Context, done), min(last+Context+1, len(ops))
		oldLine, newLine = advance(ops[done:lo], oldLine, newLine)
		oldEnd, newEnd := advance(ops[lo:hi], oldLine, newLine)
		w.hunkHeader(oldLine, oldEnd-oldLine, newLine, newEnd-newLine)
		for _, o := range ops[lo:hi] {
			w.line(o.kind, o.text)
		}
		oldLine, newLine, done = oldEnd, newEnd, hi
	}
}

// advance counts ops past the line numbers of the old and new texts.
func advance(ops []op, oldLine, newLine int) (int, int) {
	for _, o := range ops {
		if o.kind != '+' {
			oldLine++
		}
		if o.kind != '-' {
			newLine++
		}
	}
	return oldLine, newLine
}

func appendLines(ops []op, kind byte, s string) []op {
	if s == "" {
		return ops
	}
	for _, line := range splitLines(s) {
		ops = append(ops, op{kind, line})
	}
	return ops
}

// cardWriter writes the lines of a card until MaxLines are shown, then
// counts the rest.
type cardWriter struct {
	b    strings.Builder
	left int // lines that may still be shown
	cut  int // lines counted instead of shown
}

func (w *cardWriter) hunkHeader(oldBefore, oldCount, newBefore, newCount int) {
	if w.left > 0 {
		fmt.Fprintf(&w.b, "@@ -%s +%s @@\n", hunkRange(oldBefore, oldCount), hunkRange(newBefore, newCount))
	}
}

func (w *cardWriter) line(kind byte, text string) {
	if w.left == 0 {
		w.cut++
		return
	}
	w.left--
	w.b.WriteByte(kind)
	if len(text) > MaxLineBytes {
		// Back to the start of the rune at the cut; a run of bytes that
		// is not UTF-8 has none nearby and is cut where it stands.
		cut := MaxLineBytes
		for cut > MaxLineBytes-utf8.UTFMax && !utf8.RuneStart(text[cut]) {
			cut--
		}
		if !utf8.RuneStart(text[cut]) {
			cut = MaxLineBytes
		}
		fmt.Fprintf(&w.b, "%s… (%d more bytes)\n", text[:cut], len(text)-cut)
		return
	}
	w.b.WriteString(text)
	w.b.WriteByte('\n')
}

// lines writes each line of s, which is empty or ends in a newline.
func (w *cardWriter) lines(kind byte, s string) {
	for s != "" && w.left > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		w.line(kind, line)
		s = rest
	}
	w.cut += strings.Count(s, "\n")
}

// hunkRange is "start,count" as GNU diff writes it: a one-line range omits
// the count, and an empty range starts at the line before it.
func hunkRange(before, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, count)
}
