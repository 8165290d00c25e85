package toolfs

import "github.com/gordis-run/gordis/plugins/fs"

// The file tools' values say what file content they moved (fs.Transfer).
var (
	_ fs.Transfer = (*ReadResult)(nil)
	_ fs.Transfer = (*WriteResult)(nil)
	_ fs.Transfer = (*EditResult)(nil)
)

// Transferred counts the text of the lines a read returns, a newline each:
// what the call handed on, not what it scanned to find them.
func (r *ReadResult) Transferred() (read, written int64) {
	for _, l := range r.Lines {
		read += int64(len(l.Text)) + 1
	}
	return read, 0
}

// Transferred counts the content stored, byte for byte.
func (r *WriteResult) Transferred() (read, written int64) { return 0, r.written }

// Transferred counts the file's text after the edit, which replaces the
// file whole; an edit too large for the provider to hold (Omitted) has no
// text to count and says 0.
func (r *EditResult) Transferred() (read, written int64) { return 0, int64(len(r.After)) }
