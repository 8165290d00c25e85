package toolfs

import "github.com/gordis-run/gordis/plugins/fs"

// WriteResult is the canonical value of a write call. Before is nil on
// create, or when the replaced file was not text; both texts are LF-normalised.
type WriteResult struct {
	Path      string       `json:"path"`
	Operation fs.Operation `json:"operation"`
	Before    *string      `json:"before"`
	After     string       `json:"after"`
}

// EditResult is the canonical value of an edit call, LF-normalised.
type EditResult struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`

	replaceAll bool // chooses the acknowledgement's wording
}

func renderWrite(r *WriteResult) string {
	verb := "Created file"
	if r.Operation == fs.OpUpdate {
		verb = "Updated file"
	}
	return "<path>" + r.Path + "</path>\n<type>file</type>\n<content>\n" + verb + "\n</content>"
}

// renderEdit words the acknowledgement by the replace_all flag, not by the
// number of replacements.
func renderEdit(r *EditResult) string {
	if r.replaceAll {
		return "The file " + r.Path + " has been updated. All occurrences were successfully replaced."
	}
	return "The file " + r.Path + " has been updated successfully."
}
