package toolsearch

import (
	"errors"

	"github.com/gordis-run/gordis/plugins/toolsearch/internal/rustregex"
)

// compile translates the pattern from rg's dialect. rg refuses a literal
// newline before parsing, with a message upstream classifies as a failed
// search rather than a rejected pattern.
func compile(pattern string) (*rustregex.Matcher, error) {
	m, err := rustregex.Compile(pattern)
	switch {
	case err == nil:
		return m, nil
	case errors.Is(err, rustregex.ErrLiteralNewline):
		return nil, searchFailed("grep", err.Error()+multilineHint, err)
	}
	return nil, patternRejected("grep", err)
}
