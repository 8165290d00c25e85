package schema

// Valid reports whether raw is one JSON value, with white space around it
// allowed, as encoding/json accepts it. It makes one pass over the bytes
// and allocates nothing; it says nothing of where raw goes wrong (the
// caller may ask encoding/json for that).
func Valid(raw []byte) bool {
	s := scanner{b: raw}
	if !s.skipValue(0) {
		return false
	}
	s.skipSpace()
	return s.i == len(raw)
}

// A Member is one member of a JSON object: its key, decoded, and the bytes
// of its value, which alias the object's.
type Member struct {
	Key   string
	Value []byte
}

// Members returns the members of the JSON object raw, in order, repeated
// keys included, or false if raw is not an object. raw must be JSON (a text
// Valid accepted, or a part of one): its values are passed over, not
// checked, so that splitting costs little more than finding their ends.
func Members(raw []byte) ([]Member, bool) {
	s := scanner{b: raw, valid: true}
	if !s.consume('{') {
		return nil, false
	}
	var members []Member
	if s.consume('}') {
		return members, true
	}
	for {
		s.skipSpace()
		key, ok := s.key()
		if !ok || !s.consume(':') {
			return nil, false
		}
		s.skipSpace()
		start := s.i
		if !s.skipValue(1) {
			return nil, false
		}
		members = append(members, Member{Key: string(key), Value: raw[start:s.i]})
		if !s.consume(',') {
			return members, s.consume('}')
		}
	}
}

// Elements returns the elements of the JSON array raw, in order, each
// aliasing raw, or false if raw is not an array. raw must be JSON, as for
// Members.
func Elements(raw []byte) ([][]byte, bool) {
	s := scanner{b: raw, valid: true}
	if !s.consume('[') {
		return nil, false
	}
	var elems [][]byte
	if s.consume(']') {
		return elems, true
	}
	for {
		s.skipSpace()
		start := s.i
		if !s.skipValue(1) {
			return nil, false
		}
		elems = append(elems, raw[start:s.i])
		if !s.consume(',') {
			return elems, s.consume(']')
		}
	}
}
