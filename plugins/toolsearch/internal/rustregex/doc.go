// Package rustregex makes the grep tool read a pattern the way ripgrep
// 14.1.1 reads it (Rust's regex crate with rg's defaults: case-sensitive,
// Unicode-aware classes, no multiline), on top of Go's regexp, or refuse it
// (spec/search.md, port decision 2, S-037..S-040).
//
// A pattern is parsed as rg parses it, wrapped in "(?:" and ")", so that
// error texts and spans follow rg's. Classes are computed as code point sets
// (Unicode \d \w \s, POSIX classes in ASCII, \p long names, nested classes
// and the && -- ~~ operations, simple case folding) and handed to Go as one
// flat class without '\n'. Word assertions, which Go reads in ASCII, are
// rewritten so that they are decided with Unicode's \w: at the start or end
// of the pattern by consuming the character outside the match (a line
// matches either way); between two elements from the characters the
// elements can show there, by narrowing a neighbouring character to the
// wordness the assertion needs, or by splitting an element that may match
// empty into "at least once" and "not at all".
//
// Residual differences from rg, each either a refusal or confined to
// unusual input:
//   - A word assertion beside a group or alternation whose edge characters
//     are of mixed wordness (for example inside a repetition, as in
//     (?:\bx|y)+) keeps Go's ASCII \b or \B; \<, \> and the \b{...} forms
//     are refused there.
//   - Repetition counts above 1000 are refused (Go's limit), as are
//     translations too large for Go, (?-u), (?R), and the Unicode properties
//     Go has no table for (Script_Extensions, Emoji, ...).
//   - '.' and classes match one U+FFFD for each invalid UTF-8 byte; rg
//     never matches an invalid byte.
//   - \A and \z anchor at line boundaries, as ^ and $ do: rg's answer for
//     them depends on where its buffers begin.
package rustregex
