package schema

// A Member is one member of a JSON object: its key, decoded, and the bytes
// of its value, which alias the object's.
type Member struct {
	Key   string
	Value []byte
}

// Object returns the members of the JSON object raw, in order, repeated
// keys included, or false if raw is not exactly one JSON object (white
// space around it allowed) as encoding/json accepts it. It checks every
// byte in one pass and copies no value; it says nothing of where raw goes
// wrong (the caller may ask encoding/json for that).
func Object(raw []byte) ([]Member, bool) {
	s := scanner{b: raw}
	members, ok := s.members()
	if s.skipSpace(); !ok || s.i != len(raw) {
		return nil, false
	}
	return members, true
}

// Members returns the members of the JSON object raw, in order, repeated
// keys included, or false if raw is not an object. raw must be JSON (a part
// of a text Object accepted): its values are passed over, not checked, so
// that splitting costs little more than finding their ends.
func Members(raw []byte) ([]Member, bool) {
	s := scanner{b: raw, valid: true}
	return s.members()
}

// members consumes the object at s.i and returns its members.
func (s *scanner) members() ([]Member, bool) {
	if !s.consume('{') {
		return nil, false
	}
	var members []Member
	if s.consume('}') {
		return members, true
	}
	for {
		if s.peek() != '"' {
			return nil, false
		}
		key, ok := s.key()
		if !ok || !s.consume(':') {
			return nil, false
		}
		s.skipSpace()
		start := s.i
		if !s.skipValue(1) {
			return nil, false
		}
		members = append(members, Member{Key: string(key), Value: s.b[start:s.i]})
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
