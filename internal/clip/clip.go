// Package clip bounds the caller input that a model-facing message quotes.
// It is shared by the fs seam (fs.Clip), the registry and the search
// tools' matchers, which must not depend on one another for it.
package clip

import (
	"strconv"
	"unicode/utf8"
)

// Limit is the most bytes of caller input a message quotes, far above any
// real path or pattern.
const Limit = 1024

// String returns s unchanged up to Limit bytes, else its first Limit
// bytes, cut back to a UTF-8 boundary, followed by "…(N bytes more)" with
// N the bytes left out in decimal digits, e.g. "…(80896 bytes more)".
func String(s string) string {
	kept, more := Cut(s)
	if more == 0 {
		return s
	}
	return kept + "…(" + strconv.Itoa(more) + " bytes more)"
}

// Cut returns what String keeps of s and how many bytes it leaves out, for
// a message that marks the cut its own way.
func Cut(s string) (kept string, more int) {
	if len(s) <= Limit {
		return s, 0
	}
	n := Limit
	for i := 1; i < utf8.UTFMax && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n], len(s) - n
}
