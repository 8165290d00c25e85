package yamlpatch

import (
	"bytes"
	"reflect"
	"slices"

	yaml "go.yaml.in/yaml/v4"
)

// Set makes the value at path equal to value, changing as little text as
// it can: where the old and the new value are both mappings that share a
// key, or both sequences, only the entries that differ are edited (items
// taken out of a list are removed; otherwise items are compared by
// position, the extra ones appended or removed at the end), so the
// comments, order and style of the others stay. What it writes is
// rendered in the style of its surroundings. When the last step is a key
// that its mapping lacks, the key is added after the mapping's last entry;
// when it is the index one past a sequence's end, the item is appended.
//
// value is anything go.yaml.in/yaml/v4 encodes. A struct's keys are its
// yaml tags (or lowercased field names), so a config whose names come from
// json tags is best given as a map.
func Set(src []byte, path Path, value any) ([]byte, error) {
	d, vn, err := prepare(src, path, opSet, value)
	if err != nil {
		return nil, err
	}
	l, bad, err := d.resolve(path, opSet)
	if err != nil {
		return nil, fail(path, bad, err)
	}
	steps := []step{{path, opSet, vn}} // an addition
	if l.node != nil {
		steps = diff(l.node, vn, path, nil)
	}
	if len(steps) == 0 {
		return bytes.Clone(src), nil
	}
	for _, s := range steps {
		if d, err = d.edit(s.path, s.op, s.value); err != nil {
			return nil, err
		}
	}
	return d.src, nil
}

// step is one edit of a Set.
type step struct {
	path  Path
	op    op
	value *yaml.Node
}

// diff appends the edits that turn old, at path, into vn.
func diff(old, vn *yaml.Node, path Path, steps []step) []step {
	if same(old, vn) {
		return steps
	}
	sub := func(s any) Path { return append(path[:len(path):len(path)], s) }
	switch {
	case old.Kind == yaml.MappingNode && vn.Kind == yaml.MappingNode:
		oldKeys, newKeys := keys(old), keys(vn)
		shared := false
		for k := range oldKeys {
			if _, ok := newKeys[k]; ok {
				shared = true
			}
		}
		if !shared {
			break
		}
		for i := 0; i+1 < len(old.Content); i += 2 {
			if k := old.Content[i].Value; newKeys[k] == nil {
				steps = append(steps, step{sub(k), opDelete, nil})
			}
		}
		for i := 0; i+1 < len(old.Content); i += 2 {
			if k := old.Content[i].Value; newKeys[k] != nil {
				steps = diff(old.Content[i+1], newKeys[k], sub(k), steps)
			}
		}
		for i := 0; i+1 < len(vn.Content); i += 2 {
			if k := vn.Content[i].Value; oldKeys[k] == nil {
				steps = append(steps, step{sub(k), opSet, vn.Content[i+1]})
			}
		}
		return steps
	case old.Kind == yaml.SequenceNode && vn.Kind == yaml.SequenceNode:
		if gone := removed(old.Content, vn.Content); gone != nil {
			for _, i := range slices.Backward(gone) {
				steps = append(steps, step{sub(i), opDelete, nil})
			}
			return steps
		}
		n := min(len(old.Content), len(vn.Content))
		for i := range n {
			steps = diff(old.Content[i], vn.Content[i], sub(i), steps)
		}
		for i := len(old.Content) - 1; i >= n; i-- {
			steps = append(steps, step{sub(i), opDelete, nil})
		}
		for i := n; i < len(vn.Content); i++ {
			steps = append(steps, step{sub(i), opSet, vn.Content[i]})
		}
		return steps
	}
	return append(steps, step{path, opSet, vn})
}

// removed returns the indexes of the items of old that are not in vn when
// vn is old with those items taken out (nil otherwise), so that removing
// an item from the middle of a list leaves the items after it alone.
func removed(old, vn []*yaml.Node) []int {
	if len(vn) >= len(old) {
		return nil
	}
	var gone []int
	j := 0
	for i, o := range old {
		if j < len(vn) && same(o, vn[j]) {
			j++
		} else {
			gone = append(gone, i)
		}
	}
	if j < len(vn) {
		return nil
	}
	return gone
}

// keys maps the scalar keys of mapping n to their values; nil when a key
// is not a scalar or appears twice, which only a whole replacement handles.
func keys(n *yaml.Node) map[string]*yaml.Node {
	m := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if _, dup := m[k.Value]; dup || k.Kind != yaml.ScalarNode {
			return nil
		}
		m[k.Value] = n.Content[i+1]
	}
	return m
}

// same reports whether a and b mean the same value.
func same(a, b *yaml.Node) bool {
	var x, y any
	return a.Decode(&x) == nil && b.Decode(&y) == nil && reflect.DeepEqual(x, y)
}
