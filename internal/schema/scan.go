package schema

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// scanner walks one JSON text and accepts exactly what encoding/json
// accepts. It reports a syntax error only as "not JSON" (ok false): the
// caller asks encoding/json for the wording, so messages never drift.
type scanner struct {
	b []byte
	i int
	// valid: b is known to be JSON, so a skipped string need only be
	// found, not checked.
	valid bool
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (s *scanner) peek() byte {
	s.skipSpace()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// consume skips white space and one expected byte.
func (s *scanner) consume(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// stringBody scans the string that starts at s.i (an opening quote). It
// returns the bytes between the quotes, the decoded length and whether the
// body is already its own decoding (no escapes, valid UTF-8).
func (s *scanner) stringBody() (body []byte, n int, plain, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, 0, false, false
	}
	start := s.i + 1
	end, n, plain, ok := unquote(s.b, start, nil)
	if !ok {
		return nil, 0, false, false
	}
	s.i = end + 1
	return s.b[start:end], n, plain, true
}

// skipString consumes the string at s.i.
func (s *scanner) skipString() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	var end int
	if s.valid {
		end = closingQuote(s.b, s.i+1)
	} else {
		end, _ = checkedQuote(s.b, s.i+1)
	}
	if end < 0 {
		return false
	}
	s.i = end + 1
	return true
}

// key decodes the object key at s.i; a key without escapes is returned in
// place, without a copy.
func (s *scanner) key() ([]byte, bool) {
	body, n, plain, ok := s.stringBody()
	if !ok || plain {
		return body, ok
	}
	decoded := make([]byte, n)
	unquote(body, 0, decoded)
	return decoded, true
}

// str decodes the string at s.i. The bytes are copied once, into storage
// no larger than their JSON form: one pass both checks and decodes them.
func (s *scanner) str() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start := s.i + 1
	end := closingQuote(s.b, start)
	if end < 0 {
		return "", false
	}
	body := s.b[start:end]
	out := make([]byte, len(body))
	_, n, _, ok := unquote(body, 0, out)
	if !ok {
		// Not a valid string, or invalid UTF-8 that decodes longer than
		// it is written: measure, then decode into storage of that size.
		if _, n, _, ok = unquote(s.b, start, nil); !ok {
			return "", false
		}
		out = make([]byte, n)
		unquote(body, 0, out)
	}
	s.i = end + 1
	// out is not used again, so the string may own it, as strings.Builder
	// does with its buffer.
	return unsafe.String(unsafe.SliceData(out), n), true
}

// closingQuote returns the index of the quote that ends the string whose
// body starts at b[start] (one not escaped by an odd run of backslashes),
// or -1.
func closingQuote(b []byte, start int) int {
	for i := start; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		j += i
		k := j
		for k > start && b[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j
		}
		i = j + 1
	}
}

// checkedQuote is closingQuote for a body not known to be valid: it
// returns -1 also when the body holds a control character or an invalid
// escape, and reports whether the body is all ASCII. Invalid UTF-8 is
// valid JSON (encoding/json decodes it as U+FFFD), so, unlike unquote, it
// leaves non-ASCII bytes alone: it finds the quote and the backslashes
// with bytes.IndexByte and tests the rest for control characters eight
// bytes at a time, without a branch.
func checkedQuote(b []byte, start int) (end int, ascii bool) {
	end = closingQuote(b, start)
	if end < 0 {
		return -1, false
	}
	control, ascii := scanBytes(b[start:end])
	if control {
		return -1, false
	}
	body := b[start:end]
	for i := 0; ; {
		j := bytes.IndexByte(body[i:], '\\')
		if j < 0 {
			return end, ascii
		}
		i += j
		if i+1 < len(body) && shortEscapes[body[i+1]] != 0 {
			i += 2
			continue
		}
		_, size := unicodeEscape(body[i:])
		if size == 0 {
			return -1, false
		}
		i += size
	}
}

// scanBytes reports whether b holds a byte below 0x20, and whether all its
// bytes are ASCII. A borrow in the subtraction starts only at a byte below
// 0x20, so the accumulated flags are all clear exactly when there is none.
func scanBytes(b []byte) (control, ascii bool) {
	var flags, high uint64
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		flags |= (x - lsb*0x20) &^ x
		high |= x
	}
	for _, c := range b[i:] {
		if c < 0x20 {
			return true, false
		}
		high |= uint64(c)
	}
	return flags&msb != 0, high&msb == 0
}

// unquote decodes a string body from b[i:] up to its closing quote, as
// encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD).
// With dst nil it only measures; otherwise it writes the decoding into
// dst, failing if dst is too short for it. It returns the index of the closing quote (len(b)
// when b holds just the body), the decoded length and whether the body
// needed no decoding.
func unquote(b []byte, i int, dst []byte) (end, n int, plain, ok bool) {
	plain = true
	for {
		i, n = plainRun(b, i, dst, n)
		if i == len(b) {
			// Only a body given without its quote ends here.
			return i, n, plain, dst != nil
		}
		switch c := b[i]; {
		case c == '"':
			return i, n, plain, true
		case c < 0x20:
			return 0, 0, false, false
		case c < utf8.RuneSelf && c != '\\':
			return 0, 0, false, false // a plain byte dst has no room for
		case c == '\\':
			plain = false
			if i+1 < len(b) && shortEscapes[b[i+1]] != 0 {
				if dst != nil {
					if n == len(dst) {
						return 0, 0, false, false
					}
					dst[n] = shortEscapes[b[i+1]]
				}
				i, n = i+2, n+1
				continue
			}
			r, size := unicodeEscape(b[i:])
			if size == 0 || dst != nil && len(dst)-n < utf8.RuneLen(r) {
				return 0, 0, false, false
			}
			i += size
			if r < utf8.RuneSelf {
				if dst != nil {
					dst[n] = byte(r)
				}
				n++
				continue
			}
			if dst != nil {
				utf8.EncodeRune(dst[n:], r)
			}
			n += utf8.RuneLen(r)
		default: // c >= utf8.RuneSelf
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				plain = false
				if dst != nil && len(dst)-n < utf8.RuneLen(r) {
					return 0, 0, false, false
				}
				if dst != nil {
					utf8.EncodeRune(dst[n:], r)
				}
				n += utf8.RuneLen(utf8.RuneError)
				i++
				continue
			}
			if dst != nil {
				if len(dst)-n < size {
					return 0, 0, false, false
				}
				copy(dst[n:], b[i:i+size])
			}
			n += size
			i += size
		}
	}
}

// shortEscapes maps the letter after a backslash to the byte it stands
// for, or 0 if it does not start a two-byte escape.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unicodeEscape decodes the \uXXXX escape at the start of b: the rune and
// the bytes it spans, or size 0 if it is invalid. A surrogate pair is one
// rune; a lone surrogate is U+FFFD.
func unicodeEscape(b []byte) (rune, int) {
	if len(b) < 2 || b[1] != 'u' {
		return 0, 0
	}
	r := hex4(b[2:])
	switch {
	case r < 0:
		return 0, 0
	case !utf16.IsSurrogate(r):
		return r, 6
	}
	if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if r2 := hex4(b[8:]); r2 >= 0 {
			if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
				return pair, 12
			}
		}
	}
	return utf8.RuneError, 6
}

// hex4 decodes four hexadecimal digits, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// SWAR masks: lsb has the low bit of every byte set, msb the high bit.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainRun passes over the bytes from b[i] that a string body holds as
// they are, up to a quote, a backslash, a control character or a
// non-ASCII byte, copying them to dst[n:] unless dst is nil. It returns
// the new i and n. It tests and copies eight bytes at a time.
func plainRun(b []byte, i int, dst []byte, n int) (int, int) {
	for i+8 <= len(b) && (dst == nil || n+8 <= len(dst)) {
		x := binary.LittleEndian.Uint64(b[i:])
		if dst != nil {
			// Bytes past a special one are overwritten later.
			binary.LittleEndian.PutUint64(dst[n:], x)
		}
		m := special(x)
		if m != 0 {
			k := bits.TrailingZeros64(m) / 8
			return i + k, n + k
		}
		i, n = i+8, n+8
	}
	for ; i < len(b) && (dst == nil || n < len(dst)); i, n = i+1, n+1 {
		c := b[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
		if dst != nil {
			dst[n] = c
		}
	}
	return i, n
}

// special flags the high bit of each byte of x (little-endian) that is
// below 0x20, a quote, a backslash or at least 0x80. Each test is the "has
// a zero byte" trick: a borrow can flag a byte above a flagged one, never
// below, so the lowest flag is exact.
func special(x uint64) uint64 {
	quote := x ^ (lsb * '"')
	backslash := x ^ (lsb * '\\')
	control := (x - lsb*0x20) &^ x
	return (control | (quote-lsb)&^quote | (backslash-lsb)&^backslash | x) & msb
}

// number scans a number at s.i and returns its literal.
func (s *scanner) number() ([]byte, bool) {
	b, start := s.b, s.i
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return nil, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return nil, false
		}
		i = j
	}
	s.i = i
	return b[start:i], true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// literal consumes word (true, false or null) at s.i.
func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// skipValue consumes one value at nesting depth depth (the root object is 1).
func (s *scanner) skipValue(depth int) bool {
	switch s.peek() {
	case '{':
		return s.skipComposite(depth+1, '}', true)
	case '[':
		return s.skipComposite(depth+1, ']', false)
	case '"':
		return s.skipString()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		_, ok := s.number()
		return ok
	}
}

// skipComposite consumes an object (keyed) or an array from its opening
// bracket at s.i.
func (s *scanner) skipComposite(depth int, closing byte, keyed bool) bool {
	if depth > maxDepth {
		return false
	}
	s.i++
	if s.consume(closing) {
		return true
	}
	for {
		if keyed {
			if s.peek() != '"' {
				return false
			}
			if !s.skipString() || !s.consume(':') {
				return false
			}
		}
		if !s.skipValue(depth) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case closing:
			s.i++
			return true
		default:
			return false
		}
	}
}

// StringProperty returns the string value of the top-level property name of
// the JSON object raw, matching the key exactly. Of repeated keys the last
// counts, as for the validator. It reports false if the property is absent
// or not a string, or raw is not a JSON object. raw must be JSON (arguments
// the registry has validated): other strings are passed over, not checked.
func StringProperty(raw []byte, name string) (string, bool) {
	s := scanner{b: raw, valid: true}
	if !s.consume('{') {
		return "", false
	}
	var value *scanner // positioned at the last matching string value
	if s.consume('}') {
		return "", false
	}
	for {
		if s.peek() != '"' {
			return "", false
		}
		key, ok := s.key()
		if !ok || !s.consume(':') {
			return "", false
		}
		if string(key) == name {
			value = nil
			if s.peek() == '"' {
				value = &scanner{b: raw, i: s.i}
			}
		}
		if !s.skipValue(1) {
			return "", false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			if value == nil {
				return "", false
			}
			return value.str()
		default:
			return "", false
		}
	}
}
