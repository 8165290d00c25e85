package fslocal

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gordis-run/gordis/plugins/fs"
)

// FuzzApplyEdit checks the literal edit against its definition: matching on
// CRLF-normalised text, strings.Replace semantics (non-overlapping, left to
// right), and the whole result stored in the dominant style, decided on the
// first 4096 UTF-16 units (cross-checked with package utf16), through the
// writer's encoding at any chunk size.
func FuzzApplyEdit(f *testing.F) {
	f.Add("a\r\nOLD\r\nb\r\n", "OLD", "NEW", false, uint8(0))
	f.Add("a\r\nb\nc\n", "b", "B", false, uint8(1))
	f.Add("aaa", "aa", "X", false, uint8(0))
	f.Add("a a a", "a", "b", true, uint8(0))
	f.Add("x\ny", "x", "x\r", false, uint8(0))
	f.Add("a\rb\r\n", "\r", "", true, uint8(2))
	f.Add("\r\n\r\n\r\nx\n", "x", "\n\n", false, uint8(0))
	f.Add(strings.Repeat("😀", 2047)+"\r\n\n\r\n", "😀", "", true, uint8(3))
	f.Fuzz(func(t *testing.T, text, old, repl string, all bool, chunk uint8) {
		res := applyEdit(text, fs.EditRequest{Old: old, New: repl, ReplaceAll: all}, math.MaxInt)
		norm := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
		before, o, n := norm(text), norm(old), norm(repl)
		if res.Before != before {
			t.Fatalf("Before = %q, want %q", res.Before, before)
		}
		count := 0
		if o != "" {
			count = strings.Count(before, o)
		}
		if res.Replacements != count {
			t.Fatalf("Replacements = %d, want %d", res.Replacements, count)
		}
		if count == 0 || (count > 1 && !all) {
			if res.After != nil {
				t.Fatalf("a refused edit produced %q", res.After)
			}
			return
		}
		after := res.after()
		if want := strings.Join(strings.Split(before, o), n); after != want {
			t.Fatalf("After = %q, want %q", after, want)
		}
		crlf := crlfByUTF16(text)
		if crlf != dominantCRLF(text) || crlf != res.CRLF {
			t.Fatalf("dominantCRLF(%q) = %v, CRLF = %v, want %v", text, dominantCRLF(text), res.CRLF, crlf)
		}
		want := after
		if crlf {
			want = strings.ReplaceAll(after, "\n", "\r\n")
		}
		size := 2 + int(chunk)
		var stored strings.Builder
		encode(res.After, crlf, size, func(p string) error {
			if len(p) == 0 || len(p) > size {
				t.Fatalf("piece of %d bytes, chunk %d", len(p), size)
			}
			stored.WriteString(p)
			return nil
		})
		if stored.String() != want {
			t.Fatalf("stored %q, want %q", stored.String(), want)
		}
	})
}

// crlfByUTF16 is the detection as upstream states it, on real UTF-16.
func crlfByUTF16(text string) bool {
	units := utf16.Encode([]rune(text))
	if len(units) > eolSample {
		units = units[:eolSample]
	}
	crlf, bare := 0, 0
	for i, u := range units {
		if u == '\n' {
			if i > 0 && units[i-1] == '\r' {
				crlf++
			} else {
				bare++
			}
		}
	}
	return crlf > bare
}

// FuzzStream checks that the streamed decoding never depends on where
// chunks end: any buffer and read size gives what ReadText gives, text or
// error.
func FuzzStream(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint8(0), uint8(0))
	f.Add([]byte("\xEF\xBB\xBFa😀b✓c"), uint8(1), uint8(2))
	f.Add([]byte("é\xE2\x82"), uint8(3), uint8(1))
	f.Add([]byte("ab\xED\xA0\x80"), uint8(2), uint8(7))
	f.Add([]byte("\xEF\xBB"), uint8(0), uint8(0))
	f.Add([]byte("a\x00\xFF"), uint8(5), uint8(5))
	dir := f.TempDir()
	fsys := NewUnconfined(dir)
	f.Fuzz(func(t *testing.T, data []byte, bufSize, readSize uint8) {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tg := fs.Target{Key: path, Path: path}
		want, wantErr := fsys.ReadText(context.Background(), tg)

		file, _, err := fsys.openRegular("read", tg)
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		s, err := newStream(context.Background(), file, path, 0, true, utf8.UTFMax+int(bufSize))
		if err == nil {
			defer s.Close()
			buf := make([]byte, 1+int(readSize))
			for {
				var k int
				k, err = s.Read(buf)
				got.Write(buf[:k])
				if err != nil {
					break
				}
			}
			if errors.Is(err, io.EOF) {
				err = nil
			}
		}
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("stream error %v, ReadText error %v", err, wantErr)
		}
		if err == nil && got.String() != want {
			t.Fatalf("stream %q, ReadText %q", got.String(), want)
		}
	})
}
