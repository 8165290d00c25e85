package schema

import (
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

// DecodeInPlace is Decode for raw that the caller gives up: it neither
// reads nor writes raw again, for as long as the decoded strings live. A
// string property for which inPlace(name, size) is true (size is the
// length of its JSON literal without the quotes) is decoded into raw's
// own storage instead of into a copy, since unescaping only shrinks: a
// string without escapes is raw's bytes as they are, one with escapes is
// rewritten where it stands, and the returned spans say where raw no
// longer holds JSON. Only a successful decode writes into raw; on error
// raw is as it was. With inPlace nil, or for a decoder that is not
// one-pass (see Decoder), it copies as Decode does and returns no spans.
func (d *Decoder) DecodeInPlace(raw []byte, dst any, inPlace func(name string, size int) bool) ([]Span, error) {
	return d.decode(raw, dst, inPlace)
}

// pendingString is a string chosen for decoding in place: the field it
// goes to and the span of its body in raw.
type pendingString struct {
	field      *field
	start, end int
}

// str decodes the string value at s.i into the field f. A string chosen
// for decoding in place is only checked here; it is decoded once the
// whole of raw has proved valid (finishInPlace), so that an error never
// finds raw changed.
func (st *decodeState) str(f *field) bool {
	s := st.s
	if st.inPlace != nil {
		start := s.i + 1
		if end := checkedQuote(s.b, start); end >= 0 && st.inPlace(f.name, end-start) {
			st.pending = append(st.pending, pendingString{field: f, start: start, end: end})
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
		v, changed := unquoteInPlace(st.s.b[p.start:p.end])
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
// grows (one byte becomes U+FFFD's three), and a string where that would
// overtake them is finished in a copy.
func unquoteInPlace(body []byte) (string, bool) {
	w, r := 0, 0 // decoded body[:w] from body[:r]
	changed := false
	for {
		end, _ := plainRun(body, r, nil, 0)
		if w != r {
			copy(body[w:], body[r:end])
		}
		w, r = w+end-r, end
		if r == len(body) {
			return unsafe.String(unsafe.SliceData(body), w), changed
		}
		switch c := body[r]; {
		case c == '\\' && shortEscapes[body[r+1]] != 0:
			body[w] = shortEscapes[body[r+1]]
			w, r, changed = w+1, r+2, true
		case c == '\\':
			ch, size := unicodeEscape(body[r:])
			w += utf8.EncodeRune(body[w:], ch)
			r, changed = r+size, true
		default: // c >= utf8.RuneSelf: the body is valid, so no control byte
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
			r, changed = r+1, true
		}
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
