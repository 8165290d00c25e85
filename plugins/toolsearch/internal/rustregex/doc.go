// Package rustregex makes the grep tool read a pattern the way ripgrep
// 14.1.1 reads it (Rust's regex crate with rg's defaults: case-sensitive,
// Unicode-aware classes, no multiline), on top of Go's regexp, or refuse it
// (spec/search.md, port decision 2, S-037..S-040).
//
// A pattern is parsed as rg parses it, wrapped in "(?:" and ")", so that
// error texts and spans follow rg's. Classes are computed as code point sets
// (Unicode \d \w \s, POSIX classes in ASCII, \p long names, nested classes
// and the && -- ~~ operations, simple case folding) and handed to Go as one
// flat class without '\n'. Word assertions that Go would read in ASCII are
// rewritten: at the start or end of the pattern by consuming the character
// outside the match with a Unicode class, which cannot change whether a line
// matches; between two elements by deciding them from the elements' edge
// characters, or by narrowing a neighbouring single character.
//
// Residual differences from rg, each either a refusal or confined to
// unusual input:
//   - \b and \B between two elements whose wordness is not known (for
//     example between two arbitrary classes) keep Go's ASCII meaning; \<,
//     \> and the \b{...} forms are refused there.
//   - Repetition counts above 1000 are refused (Go's limit), as are
//     translations too large for Go and (?-u), (?R), Script_Extensions and
//     the other Unicode properties Go has no table for.
//   - '.' and classes match one U+FFFD for each invalid UTF-8 byte; rg
//     never matches an invalid byte.
//   - \A and \z, and ^ and $ under (?-m), anchor at line boundaries: rg's
//     answer for them depends on where its buffers begin.
package rustregex
