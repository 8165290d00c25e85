package rustregex

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gordis-run/gordis/internal/clip"
)

// ErrLiteralNewline is rg's refusal of a pattern that would have to match a
// line terminator (S-039). It is not a parse error: rg reports it without the
// "regex parse error" header, and the tool classifies it as a search failure.
var ErrLiteralNewline = errors.New(`the literal "\n" is not allowed in a regex`)

// SyntaxError is a pattern rg refuses to parse (S-040), or one this layer
// cannot translate to Go's regexp without matching something else.
type SyntaxError struct {
	Pattern string // the pattern as given
	Reason  string // what rg's parser says, e.g. "unclosed group"

	// start and end are the span of the offending text as code point offsets
	// into "(?:" + Pattern + ")", the form rg parses and shows; end == 0
	// means no span is known and Error shows no caret line.
	start, end int
}

// Error renders the text rg 14.1.1 prints after "rg: ". A pattern longer
// than clip.Limit bytes is cut there, marked as fs.Clip marks a cut, and
// the caret line is shown only when the span lies in what is kept.
func (e *SyntaxError) Error() string {
	var b strings.Builder
	b.WriteString("regex parse error:\n    (?:")
	b.WriteString(clip.String(e.Pattern))
	b.WriteString(")\n")
	kept, more := clip.Cut(e.Pattern)
	if e.end > 0 && (more == 0 || e.end <= 3+utf8.RuneCountInString(kept)) {
		b.WriteString("    ")
		b.WriteString(strings.Repeat(" ", e.start))
		b.WriteString(strings.Repeat("^", max(1, e.end-e.start)))
		b.WriteString("\n")
	}
	b.WriteString("error: ")
	b.WriteString(e.Reason)
	return b.String()
}

// rg's parser reasons, worded as rg words them.
const (
	reasonBackreference     = "backreferences are not supported"
	reasonLookAround        = "look-around, including look-ahead and look-behind, is not supported"
	reasonClassEscape       = "invalid escape sequence found in character class"
	reasonClassRange        = "invalid character class range, the start must be <= the end"
	reasonClassRangeLiteral = "invalid range boundary, must be a literal"
	reasonClassUnclosed     = "unclosed character class"
	reasonDecimalInvalid    = "decimal literal invalid"
	reasonEscapeEOF         = "incomplete escape sequence, reached end of pattern prematurely"
	reasonEscapeUnknown     = "unrecognized escape sequence"
	reasonFlagDangling      = "dangling flag negation operator"
	reasonFlagDuplicate     = "duplicate flag"
	reasonFlagEOF           = "expected flag but got end of regex"
	reasonFlagRepeatedNeg   = "flag negation operator repeated"
	reasonFlagUnknown       = "unrecognized flag"
	reasonGroupNameDup      = "duplicate capture group name"
	reasonGroupNameEmpty    = "empty capture group name"
	reasonGroupNameEOF      = "unclosed capture group name"
	reasonGroupNameInvalid  = "invalid capture group character"
	reasonGroupUnclosed     = "unclosed group"
	reasonGroupUnopened     = "unopened group"
	reasonHexEmpty          = "hexadecimal literal empty"
	reasonHexInvalid        = "hexadecimal literal is not a Unicode scalar value"
	reasonHexDigit          = "invalid hexadecimal digit"
	reasonNestLimit         = "exceed the maximum number of nested parentheses/brackets (250)"
	reasonRepeatDecimal     = "repetition quantifier expects a valid decimal"
	reasonRepeatInvalid     = "invalid repetition count range, the start must be <= the end"
	reasonRepeatMissing     = "repetition operator missing expression"
	reasonRepeatUnclosed    = "unclosed counted repetition"
	reasonUnicodeClass      = "invalid Unicode character class"
	reasonWordBoundaryChar  = "special word boundary assertion is either unclosed or contains an invalid character"
	reasonWordBoundaryName  = "unrecognized special word boundary assertion, valid choices are: start, end, start-half or end-half"
	reasonWordBoundaryEOF   = "found either the beginning of a special word boundary or a bounded repetition on a \\b with an opening brace, but no closing brace"
)

// Refusals of this layer: rg accepts these, Go's regexp cannot say them.
const (
	reasonNoUnicode     = "disabling Unicode mode with (?-u) is not supported by this search"
	reasonCRLF          = "CRLF mode (?R) is not supported by this search"
	reasonTooLarge      = "pattern is too large for this search"
	reasonRepeatTooBig  = "repetition counts above 1000 are not supported by this search"
	reasonWordAssertion = "this word boundary assertion cannot be translated here; put it next to a literal or at the start or end of the pattern"
)
