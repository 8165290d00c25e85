package toolsearch

import (
	"strconv"
	"strings"
)

// GlobResult is the canonical value of a glob call: the search root as the
// model sees it and every matching path, oldest first. It is never capped.
type GlobResult struct {
	Root  string   `json:"root"`
	Paths []string `json:"paths"`
}

const globUnsaved = "The complete result could not be saved; narrow pattern or path to see more."

// renderGlob shows a result that fits whole, one path per line, and a
// larger one as a page sampled across the root's top-level entries.
func renderGlob(maxResults int) func(*GlobResult) string {
	return func(r *GlobResult) string {
		switch {
		case r == nil || len(r.Paths) == 0:
			return "No files found"
		case len(r.Paths) <= maxResults:
			return strings.Join(r.Paths, "\n")
		}
		page, shown, total := sample(r.Paths, r.Root, maxResults)
		var b strings.Builder
		for _, p := range page {
			b.WriteString(p)
			b.WriteByte('\n')
		}
		b.WriteString("\n(Showing ")
		b.WriteString(strconv.Itoa(len(page)))
		b.WriteString(" of ")
		b.WriteString(strconv.Itoa(len(r.Paths)))
		b.WriteString(" paths")
		if total == len(r.Paths) {
			b.WriteString(".")
		} else {
			b.WriteString(", sampled across " + strconv.Itoa(shown) + " of the " + strconv.Itoa(total) +
				" top-level entries this pattern matched instead of taken in modification-time order.")
			if shown < total {
				b.WriteString(" Narrow path to inspect a specific subtree.")
			}
		}
		b.WriteString(" " + globUnsaved + ")")
		return b.String()
	}
}

// sample picks limit paths round-robin across the top-level entries below
// root (groups in order of first appearance, each in its own order) and
// returns them grouped, with the number of groups that got a slot and the
// number of groups in all.
func sample(paths []string, root string, limit int) (page []string, shown, total int) {
	index := map[string]int{}
	var groups [][]string
	for _, p := range paths {
		k := topLevel(p, root)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], p)
	}
	taken := make([]int, len(groups))
	for n, round := 0, 0; n < limit; round++ {
		for g := range groups {
			if n < limit && round < len(groups[g]) {
				taken[g]++
				n++
			}
		}
	}
	page = make([]string, 0, limit)
	for g, k := range taken {
		if k > 0 {
			shown++
		}
		page = append(page, groups[g][:k]...)
	}
	return page, shown, len(groups)
}

// topLevel is the first segment of p below root: for root ".", p without a
// leading "./"; otherwise p without root (trailing separators dropped) and
// "/", or "" when p is the root itself; then without leading separators.
func topLevel(p, root string) string {
	if root == "." {
		p = strings.TrimPrefix(p, "./")
	} else if p == root {
		p = ""
	} else {
		p = strings.TrimPrefix(p, strings.TrimRight(root, "/")+"/")
	}
	p = strings.TrimLeft(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return p
}
