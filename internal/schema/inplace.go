package schema

import (
	"bytes"
	"unicode/utf8"
	"unsafe"
)

// Span is a string property that DecodeInPlace decoded into the bytes it
// was given: raw[Start:End], its JSON literal with the quotes, no longer
// holds JSON, and Value, the decoded string, shares its storage.
type Span struct {
	Start, End int
	Value      string
}

// pendingString is a string chosen for decoding in place: the field it
// goes to, the span of its body in raw, and whether the body is all ASCII.
type pendingString struct {
	field      *field
	start, end int
	ascii      bool
}

// str decodes the string value at s.i into the field f. A string chosen
// for decoding in place is only checked here; it is decoded once the
// whole of raw has proved valid (finishInPlace), so that an error never
// finds raw changed.
func (st *decodeState) str(f *field) bool {
	s := st.s
	if st.inPlace != nil {
		start := s.i + 1
		if end, ascii := checkedQuote(s.b, start); end >= 0 && st.inPlace(f.name, end-start) {
			st.pending = append(st.pending, pendingString{field: f, start: start, end: end, ascii: ascii})
			s.i = end + 1
			return true
		}
	}
	v, ok := s.str()
	if ok {
		st.target(f).SetString(v)
	}
	return ok
}

// finishInPlace decodes the pending strings into raw and stores them; the
// spans are those it changed.
func (st *decodeState) finishInPlace() []Span {
	var spans []Span
	for _, p := range st.pending {
		v, changed := unquoteInPlace(st.s.b[p.start:p.end], p.ascii)
		st.target(p.field).SetString(v)
		if changed {
			spans = append(spans, Span{Start: p.start - 1, End: p.end + 1, Value: v})
		}
	}
	return spans
}

// unquoteInPlace decodes body, a valid JSON string body, into body itself,
// and returns the decoded string, which shares body's storage, and whether
// that changed body (a body without escapes and of valid UTF-8 is its own
// decoding). Each escape is longer than what it stands for, so the
// decoding never overtakes the bytes still to be read; only invalid UTF-8
// grows (see unquoteInvalidInPlace). ascii says the body is all ASCII,
// which spares a UTF-8 check.
func unquoteInPlace(body []byte, ascii bool) (string, bool) {
	if !ascii && !utf8.Valid(body) {
		return unquoteInvalidInPlace(body)
	}
	w, r := 0, 0 // decoded body[:w] from body[:r]
	for {
		// Up to the next escape, the bytes are their own decoding.
		run := bytes.IndexByte(body[r:], '\\')
		if run < 0 {
			run = len(body) - r
		}
		if w != r {
			copy(body[w:], body[r:r+run])
		}
		w, r = w+run, r+run
		if r == len(body) {
			return unsafe.String(unsafe.SliceData(body), w), w != r
		}
		w, r = unescape(body, w, r)
	}
}

// unescape decodes the escape at body[r] into body[w:], w <= r, and
// returns the new w and r.
func unescape(body []byte, w, r int) (int, int) {
	if c := shortEscapes[body[r+1]]; c != 0 {
		body[w] = c
		return w + 1, r + 2
	}
	ch, size := unicodeEscape(body[r:])
	return w + utf8.EncodeRune(body[w:], ch), r + size
}

// unquoteInvalidInPlace is unquoteInPlace for a body that holds invalid
// UTF-8, each byte of which decodes to U+FFFD's three: a string where that
// would overtake the bytes still to be read is finished in a copy.
func unquoteInvalidInPlace(body []byte) (string, bool) {
	w, r := 0, 0
	for {
		end, _ := plainRun(body, r, nil, 0)
		if w != r {
			copy(body[w:], body[r:end])
		}
		w, r = w+end-r, end
		if r == len(body) {
			return unsafe.String(unsafe.SliceData(body), w), true
		}
		if body[r] == '\\' {
			w, r = unescape(body, w, r)
			continue
		}
		// Non-ASCII: the body is valid JSON, so no control byte.
		ch, size := utf8.DecodeRune(body[r:])
		if ch != utf8.RuneError || size > 1 {
			copy(body[w:], body[r:r+size])
			w, r = w+size, r+size
			continue
		}
		if w+utf8.RuneLen(ch) > r+1 {
			return finishCopy(body, w, r), true
		}
		w += utf8.EncodeRune(body[w:], ch)
		r++
	}
}

// finishCopy is unquoteInPlace's way out: body[:w] holds the decoding of
// body[:r], and body[r:] is untouched; both go to storage of their size.
func finishCopy(body []byte, w, r int) string {
	_, rest, _, _ := unquote(body, r, nil)
	out := make([]byte, w+rest)
	copy(out, body[:w])
	unquote(body, r, out[w:])
	return unsafe.String(unsafe.SliceData(out), len(out))
}
