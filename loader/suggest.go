package loader

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// closest returns up to three of names within a few edits of name (two,
// or a third of its length when that is more), closest first, ignoring
// case: the names a typo most likely meant.
func closest(name string, names []string) []string {
	type near struct {
		name string
		d    int
	}
	var found []near
	limit := max(2, len(name)/3)
	for _, n := range names {
		if d := distance(strings.ToLower(name), strings.ToLower(n)); d <= limit {
			found = append(found, near{n, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return cmp.Compare(a.d, b.d) })
	out := make([]string, 0, 3)
	for _, n := range found[:min(3, len(found))] {
		out = append(out, n.name)
	}
	return out
}

// didYouMean words the names closest to name as a hint,
// ` (did you mean "a" or "b"?)`, or "" when none is close.
func didYouMean(name string, names []string) string {
	near := closest(name, names)
	if len(near) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(quoted(near), " or ") + "?)"
}

// keyHint is the hint for an unknown property at path (as the validator
// names it: "roots[0].readonly") in a config of the JSON Schema doc: the
// properties the schema allows beside it that are close to its name.
func keyHint(doc []byte, path string) string {
	var cur map[string]any
	if json.Unmarshal(doc, &cur) != nil {
		return ""
	}
	defs, _ := cur["$defs"].(map[string]any)
	for {
		if ref, ok := cur["$ref"].(string); ok {
			cur, _ = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		if strings.HasPrefix(path, "[") {
			end := strings.IndexByte(path, ']')
			cur, _ = cur["items"].(map[string]any)
			if end < 0 || cur == nil {
				return ""
			}
			path = strings.TrimPrefix(path[end+1:], ".")
			continue
		}
		// The longest property that the path goes through, so that a
		// key holding a dot is still followed; none: path is the key.
		props, _ := cur["properties"].(map[string]any)
		via := ""
		for k := range props {
			if (strings.HasPrefix(path, k+".") || strings.HasPrefix(path, k+"[")) && len(k) > len(via) {
				via = k
			}
		}
		if via == "" {
			return didYouMean(path, slices.Sorted(maps.Keys(props)))
		}
		cur, _ = props[via].(map[string]any)
		path = strings.TrimPrefix(path[len(via):], ".")
	}
}

func quoted(list []string) []string {
	q := make([]string, len(list))
	for i, n := range list {
		q[i] = strconv.Quote(n)
	}
	return q
}

// distance is the Levenshtein distance between a and b, in bytes: plugin
// names and config keys are ASCII.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
