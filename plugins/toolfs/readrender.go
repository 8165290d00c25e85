package toolfs

import (
	"strconv"
	"strings"
)

// ReadResult is the canonical value of a read call. Whether the byte cap
// ended the page is not stored: the renderer derives it from the limit.
type ReadResult struct {
	Path       string `json:"path"`
	Offset     int    `json:"offset"`
	Lines      []Line `json:"lines"`
	TotalLines int    `json:"totalLines"`

	limit int
}

// renderRead writes the read envelope: numbered lines, a blank line and a
// footer; an empty page is the footer alone. The path is never quoted.
func renderRead(r *ReadResult) string {
	var b strings.Builder
	b.WriteString("<path>")
	b.WriteString(r.Path)
	b.WriteString("</path>\n<type>file</type>\n<content>\n")
	for _, l := range r.Lines {
		b.WriteString(strconv.Itoa(l.Number))
		b.WriteString(": ")
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	if len(r.Lines) > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(readFooter(r))
	b.WriteString("\n</content>")
	return b.String()
}

func readFooter(r *ReadResult) string {
	start, end := r.Offset, r.Offset+len(r.Lines)-1
	span := strconv.Itoa(start) + "-" + strconv.Itoa(end)
	next := strconv.Itoa(end + 1)
	switch {
	case len(r.Lines) < r.limit && end < r.TotalLines:
		return "(Output capped. Showing lines " + span + ". Use offset=" + next + " to continue.)"
	case end < r.TotalLines:
		return "(Showing lines " + span + " of " + strconv.Itoa(r.TotalLines) + ". Use offset=" + next + " to continue.)"
	default:
		return "(End of file - total " + strconv.Itoa(r.TotalLines) + " lines)"
	}
}
