package fslocal

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestSizedFile: a walked file reads to the size it had when opened and
// says io.EOF with its last bytes, so a small file costs one read; bytes
// appended after the open are not read; an empty file ends at once.
func TestSizedFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, content, appended string
		first                   int // bytes of the first Read, which must also say io.EOF
	}{
		{"empty", "", "", 0},
		{"small", "abc\n", "", 4},
		{"grown after the open", "abc\n", "more\n", 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			write(t, path, c.content, 0o644)
			file, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := openChecked(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if c.appended != "" {
				a, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				a.WriteString(c.appended)
				a.Close()
			}
			buf := make([]byte, 64)
			n, err := f.Read(buf)
			if n != c.first || err != io.EOF || string(buf[:n]) != c.content {
				t.Fatalf("Read = %d %q, %v; want %d %q, io.EOF", n, buf[:n], err, c.first, c.content)
			}
			if n, err := f.Read(buf); n != 0 || err != io.EOF {
				t.Fatalf("Read after the end = %d, %v", n, err)
			}
		})
	}
}
