package toolsearch

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// GrepResult is the canonical value of a grep call: every matching line,
// in walk order, never capped.
type GrepResult struct {
	Matches []GrepMatch `json:"matches"`
}

// GrepMatch is one matching line: the display path, the 1-based line
// number, and the whole line without its terminator (or the placeholder
// for a line that is not valid UTF-8).
type GrepMatch struct {
	Path       string `json:"path"`
	LineNumber int    `json:"lineNumber"`
	Line       string `json:"line"`
}

const (
	grepUnsaved   = "(The complete result could not be saved; narrow pattern, path, or include to see more.)"
	lineTruncated = " (line truncated)"
)

// renderGrep shows the first maxMatches matches grouped by path in order
// of first appearance, each line cut to maxLineBytes.
func renderGrep(maxMatches, maxLineBytes int) func(*GrepResult) string {
	return func(r *GrepResult) string {
		if r == nil || len(r.Matches) == 0 {
			return "No matches found"
		}
		shown := r.Matches[:min(len(r.Matches), maxMatches)]
		var b strings.Builder
		switch {
		case len(shown) < len(r.Matches):
			b.WriteString("Found " + strconv.Itoa(len(shown)) + " of " + strconv.Itoa(len(r.Matches)) + " matches")
		case len(shown) == 1:
			b.WriteString("Found 1 match")
		default:
			b.WriteString("Found " + strconv.Itoa(len(shown)) + " matches")
		}
		for _, group := range groupByPath(shown) {
			b.WriteString("\n\n")
			b.WriteString(group[0].Path)
			for _, m := range group {
				b.WriteString("\nLine ")
				b.WriteString(strconv.Itoa(m.LineNumber))
				b.WriteString(": ")
				b.WriteString(preview(m.Line, maxLineBytes))
			}
		}
		if len(shown) < len(r.Matches) {
			b.WriteString("\n\n" + grepUnsaved)
		}
		return b.String()
	}
}

// groupByPath groups matches by path, groups in order of first appearance.
// Walk order keeps a file's matches together, so this is one pass unless a
// path comes back.
func groupByPath(ms []GrepMatch) [][]GrepMatch {
	var groups [][]GrepMatch
	index := map[string]int{}
	start := 0
	for i := 1; i <= len(ms); i++ {
		if i < len(ms) && ms[i].Path == ms[start].Path {
			continue
		}
		run := ms[start:i:i]
		if g, ok := index[run[0].Path]; ok {
			groups[g] = append(groups[g], run...)
		} else {
			index[run[0].Path] = len(groups)
			groups = append(groups, run)
		}
		start = i
	}
	return groups
}

// preview cuts a line longer than maxBytes to its first maxBytes bytes,
// dropping a character the cut splits, and marks it truncated.
func preview(line string, maxBytes int) string {
	if len(line) <= maxBytes {
		return line
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + lineTruncated
}
