package fslocal

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

// TestWalkedFileReadsItsSize: a walked file, opened, reads to the size it
// had when opened and says io.EOF with its last bytes, so a small file
// costs one read; bytes appended after the open are not read; an empty
// file ends at once; a second Close says so.
func TestWalkedFileReadsItsSize(t *testing.T) {
	for _, c := range []struct {
		name, content, appended string
	}{
		{"empty", "", ""},
		{"small", "abc\n", ""},
		{"grown after the open", "abc\n", "more\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, root := fixture(t)
			path := filepath.Join(root, "f.txt")
			write(t, path, c.content, 0o644)
			var opened io.ReadCloser
			err := f.Walk(context.Background(), mustResolve(t, f, path), func(e fs.WalkEntry) error {
				var err error
				opened, err = e.Open(context.Background())
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.appended != "" {
				a, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				a.WriteString(c.appended)
				a.Close()
			}
			buf := make([]byte, 64)
			n, err := opened.Read(buf)
			if n != len(c.content) || err != io.EOF || string(buf[:n]) != c.content {
				t.Fatalf("Read = %d %q, %v; want %d %q, io.EOF", n, buf[:n], err, len(c.content), c.content)
			}
			if n, err := opened.Read(buf); n != 0 || err != io.EOF {
				t.Fatalf("Read after the end = %d, %v", n, err)
			}
			if err := opened.Close(); err != nil {
				t.Fatal(err)
			}
			if err := opened.Close(); err == nil {
				t.Error("a second Close succeeded")
			}
		})
	}
}
