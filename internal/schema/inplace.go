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
// raw is as it was. A decoder that is not one-pass (see Decoder) copies
// as Decode does and returns no spans.
func (d *Decoder) DecodeInPlace(raw []byte, dst any, inPlace func(name string, size int) bool) ([]Span, error) {
	return d.decode(raw, dst, inPlace)
}

// pendingString is a string chosen for decoding in place: the field it
// goes to, the span of its body in raw, and its decoded length.
type pendingString struct {
	field      *field
	start, end int
	n          int
}

// str decodes the string value at s.i into the field f. A string chosen
// for decoding in place is only checked and measured here; it is
// decoded once the whole of raw has proved valid (finishInPlace), so
// that an error never finds raw changed.
func (st *decodeState) str(f *field) bool {
	s := st.s
	start := s.i + 1
	end := -1
	if st.inPlace != nil && s.i < len(s.b) && s.b[s.i] == '"' {
		end = closingQuote(s.b, start)
	}
	if end < 0 || !st.inPlace(f.name, end-start) {
		v, ok := s.str()
		if ok {
			st.target(f).SetString(v)
		}
		return ok
	}
	_, n, plain, ok := unquote(s.b, start, nil)
	if !ok {
		return false
	}
	s.i = end + 1
	if plain { // its own decoding: share it as it is
		st.target(f).SetString(unsafe.String(&s.b[start], n))
		return true
	}
	st.pending = append(st.pending, pendingString{field: f, start: start, end: end, n: n})
	return true
}

// finishInPlace decodes the pending strings into raw and stores them.
func (st *decodeState) finishInPlace() []Span {
	if len(st.pending) == 0 {
		return nil
	}
	spans := make([]Span, len(st.pending))
	for i, p := range st.pending {
		v := unquoteInPlace(st.s.b[p.start:p.end], p.n)
		st.target(p.field).SetString(v)
		spans[i] = Span{Start: p.start - 1, End: p.end + 1, Value: v}
	}
	return spans
}

// unquoteInPlace decodes body, a valid JSON string body whose decoding is
// n bytes long, into body itself, and returns the decoded string, which
// shares body's storage. Each escape is longer than what it stands for,
// so the decoding never overtakes the bytes still to be read; only
// invalid UTF-8 grows (one byte becomes U+FFFD's three), and a string
// where that would overtake them is finished in a copy instead.
func unquoteInPlace(body []byte, n int) string {
	w, r := 0, 0 // decoded body[:w] from body[:r]
	for r < len(body) {
		end, _ := plainRun(body, r, nil, 0)
		if w != r {
			copy(body[w:], body[r:end])
		}
		w, r = w+end-r, end
		if r == len(body) {
			break
		}
		switch c := body[r]; {
		case c == '\\' && shortEscapes[body[r+1]] != 0:
			body[w] = shortEscapes[body[r+1]]
			w, r = w+1, r+2
		case c == '\\':
			ch, size := unicodeEscape(body[r:])
			w += utf8.EncodeRune(body[w:], ch)
			r += size
		default: // c >= utf8.RuneSelf: the body is valid, so no control byte
			ch, size := utf8.DecodeRune(body[r:])
			if ch == utf8.RuneError && size == 1 {
				size = utf8.RuneLen(ch)
				if w+size > r+1 {
					return finishCopy(body, w, r, n)
				}
				utf8.EncodeRune(body[w:], ch)
				w, r = w+size, r+1
				continue
			}
			copy(body[w:], body[r:r+size])
			w, r = w+size, r+size
		}
	}
	return unsafe.String(unsafe.SliceData(body), w)
}

// finishCopy is unquoteInPlace's way out: body[:w] holds the decoding of
// body[:r] and body[r:] is untouched; both go to storage of n bytes.
func finishCopy(body []byte, w, r, n int) string {
	out := make([]byte, n)
	copy(out, body[:w])
	unquote(body, r, out[w:])
	return unsafe.String(unsafe.SliceData(out), n)
}
