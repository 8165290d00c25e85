package toolfs

import (
	"strconv"
	"strings"

	"github.com/gordis-run/gordis/plugins/fs"
)

// ListResult is the canonical value of a list call: one page of entries,
// while TotalEntries and Counts describe the whole directory.
type ListResult struct {
	Path         string      `json:"path"`
	Offset       int         `json:"offset"`
	Entries      []ListEntry `json:"entries"`
	TotalEntries int         `json:"totalEntries"`
	Counts       ListCounts  `json:"counts"`
}

// ListEntry is one listed child; Type is file, directory or other.
type ListEntry struct {
	Name string  `json:"name"`
	Type fs.Type `json:"type"`
}

// ListCounts is the composition of the whole directory.
type ListCounts struct {
	Directories int `json:"directories"`
	Files       int `json:"files"`
	Other       int `json:"other"`
}

// displayName returns name verbatim unless it could make the listing say
// something untrue: a control character, a backslash, a leading quote, a
// trailing @ (the non-regular marker) or "</" (the envelope). Such a name is
// written as JavaScript's JSON.stringify would, with "</" neutralised.
func displayName(name string) string {
	if !needsQuoting(name) {
		return name
	}
	return strings.ReplaceAll(jsQuote(name), "</", `<\/`)
}

func needsQuoting(name string) bool {
	if strings.HasPrefix(name, `"`) || strings.HasSuffix(name, "@") || strings.Contains(name, "</") {
		return true
	}
	for _, r := range name {
		if r == '\\' || isControl(r) {
			return true
		}
	}
	return false
}

// isControl is Unicode category Cc: C0, DEL and C1.
func isControl(r rune) bool { return r < 0x20 || (r >= 0x7F && r <= 0x9F) }

// jsQuote is JSON.stringify for a string. Unlike encoding/json it leaves
// <, >, &, U+2028 and U+2029 raw and escapes only the quote, the backslash and
// C0 controls. Invalid UTF-8 (which JavaScript strings cannot hold) shows as
// U+FFFD.
func jsQuote(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xF])
			} else {
				b.WriteRune(r) // utf8.RuneError for invalid bytes
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// renderList writes the list envelope: the entries of the page, a blank
// line, and a footer that always states the complete size and composition.
func renderList(r *ListResult) string {
	var b strings.Builder
	b.WriteString("<path>")
	b.WriteString(displayName(r.Path))
	b.WriteString("</path>\n<type>directory</type>\n<content>\n")
	if r.TotalEntries == 0 {
		b.WriteString("(Empty directory)\n</content>")
		return b.String()
	}
	for _, e := range r.Entries {
		b.WriteString(displayName(e.Name))
		switch e.Type {
		case fs.TypeDirectory:
			b.WriteByte('/')
		case fs.TypeOther:
			b.WriteByte('@')
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(listFooter(r))
	b.WriteString("\n</content>")
	return b.String()
}

func listFooter(r *ListResult) string {
	comp := count(r.Counts.Directories, "directory", "directories") + ", " + count(r.Counts.Files, "file", "files")
	if r.Counts.Other > 0 {
		comp += ", " + strconv.Itoa(r.Counts.Other) + " other"
	}
	start, end, total := r.Offset, r.Offset+len(r.Entries)-1, r.TotalEntries
	switch {
	case start == 1 && end == total:
		return "(" + count(total, "entry", "entries") + ": " + comp + ")"
	case end < total:
		return "(Showing entries " + strconv.Itoa(start) + "-" + strconv.Itoa(end) + " of " + strconv.Itoa(total) +
			": " + comp + ". Use offset=" + strconv.Itoa(end+1) + " to continue.)"
	default:
		return "(Showing entries " + strconv.Itoa(start) + "-" + strconv.Itoa(end) + " of " + strconv.Itoa(total) + ": " + comp + ".)"
	}
}

// count says "1 file" but "0 files" and "2 files".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
