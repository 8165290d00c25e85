package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// The lines of an input, whatever their lengths and wherever the buffer's
// edges fall, from a regular file (at any offset) and from a pipe (through
// a temporary file, which is gone afterwards, or in memory when there is
// no temporary directory); a long line is held in storage of its own size.
func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 3*lineBufSize+17)
	lines := []string{"", "a", long, "b", strings.Repeat("y", lineBufSize-1), strings.Repeat("z", lineBufSize), long + "\r", "last"}
	input := "skip\n" + strings.Join(lines, "\n") // no final newline
	file := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(file, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		open func(t *testing.T) io.Reader
	}{
		{"file after its first line", func(t *testing.T) io.Reader {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if _, err := f.Seek(int64(len("skip\n")), io.SeekStart); err != nil {
				t.Fatal(err)
			}
			return f
		}},
		{"pipe", func(t *testing.T) io.Reader {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			t.Cleanup(func() {
				if left, err := os.ReadDir(tmp); len(left) > 0 || err != nil {
					t.Errorf("left in the temporary directory: %v, %v", left, err)
				}
			})
			return pipe(t, input[len("skip\n"):])
		}},
		{"pipe without a temporary directory", func(t *testing.T) io.Reader {
			t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
			return pipe(t, input[len("skip\n"):])
		}},
		{"one byte at a time", func(t *testing.T) io.Reader {
			return iotest.OneByteReader(strings.NewReader(input[len("skip\n"):]))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr := newLineReader(tc.open(t))
			if got := lr.file != nil; got != strings.HasPrefix(tc.name, "file") {
				t.Errorf("read as a regular file: %v", got)
			}
			for i, want := range lines {
				got, err := lr.next()
				if err != nil || string(got) != want {
					t.Fatalf("line %d: %d bytes %.20q, %v; want %d bytes %.20q", i+1, len(got), got, err, len(want), want)
				}
				if len(got) > lineBufSize && cap(got) != len(got) {
					t.Errorf("line %d: %d bytes in storage of %d", i+1, len(got), cap(got))
				}
			}
			if got, err := lr.next(); err != io.EOF {
				t.Errorf("after the last line: %q, %v; want io.EOF", got, err)
			}
		})
	}
}

// pipe returns the read end of a pipe that delivers text.
func pipe(t *testing.T, text string) io.Reader {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	go func() {
		w.Write([]byte(text))
		w.Close()
	}()
	return r
}

// A read error ends the lines at once, the partial line dropped.
func TestLineReaderError(t *testing.T) {
	broken := errors.New("broken")
	lr := newLineReader(io.MultiReader(strings.NewReader("one\ntw"), iotest.ErrReader(broken)))
	if got, err := lr.next(); string(got) != "one" || err != nil {
		t.Fatalf("first line %q, %v", got, err)
	}
	if got, err := lr.next(); err != broken {
		t.Fatalf("then %q, %v; want the read error", got, err)
	}
}
