package fslocal

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

var (
	holdAll   = editConfig{held: math.MaxInt64, chunk: streamChunk}
	streamAll = func(chunk int) editConfig { return editConfig{held: -1, chunk: chunk} }
)

// editOnce writes text to path, edits it with cfg, and returns the bytes
// left on disk with the outcome.
func editOnce(t *testing.T, f *FS, path, text string, edit fs.EditRequest, cfg editConfig) (string, *fs.EditOutcome, error) {
	t.Helper()
	write(t, path, text, 0o640)
	out, err := f.editText(context.Background(), mustResolve(t, f, path), edit, nil, cfg)
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if m := mode(t, path); m != 0o640 {
		t.Fatalf("mode %v after the edit", m)
	}
	if left := leftovers(t, filepath.Dir(path)); len(left) != 0 {
		t.Fatalf("staging left behind: %v", left)
	}
	return string(b), out, err
}

func sameError(a, b error) bool {
	var fa, fb *fs.Error
	if errors.As(a, &fa) && errors.As(b, &fb) {
		return fa.Code == fb.Code && fa.Message == fb.Message
	}
	return a == nil && b == nil
}

// A streamed edit leaves the same bytes and fails with the same error as
// the in-memory edit of the same file, whatever the chunk size: matches and
// CRLF pairs across chunk boundaries, the BOM, the line-ending style from
// the first 4096 UTF-16 units, and the failures' order.
func FuzzEditStreamMatchesMemory(f *testing.F) {
	f.Add("a\r\nOLD\r\nb\r\n", "OLD\n", "NEW\nNEW\n", false, uint8(0))
	f.Add("\xEF\xBB\xBFab\r\ncd\r\n", "b\r\nc", "X", false, uint8(1))
	f.Add("aaaaaa", "aa", "b", true, uint8(2))
	f.Add("aaa", "aa", "b", false, uint8(0))
	f.Add("xéy✓z😀x", "😀", "é", true, uint8(2))
	f.Add("a a \xff", "a", "b", false, uint8(3))
	f.Add("a\xffb\x00", "a", "b", false, uint8(1))
	f.Add("abc\xe2\x9c", "abc", "x", false, uint8(1))
	f.Add("x\r\r\ny\r", "\r", "", true, uint8(0))
	f.Add("\xEF\xBB", "x", "y", false, uint8(0))
	f.Add(strings.Repeat("😀", 2047)+"\r\n\n\r\nOLD\n", "OLD", "new", false, uint8(9))
	f.Add(strings.Repeat("é", 4095)+"\r\n\r\n\n", "é", "e\n", true, uint8(200))
	f.Add(strings.Repeat("a", 24)+"bc", "aaaaaaaab", "X", false, uint8(6))
	f.Add("aabaabaabaabaabaabcacaabaabaabaabcb", "aabaabaabaabcb", "X", false, uint8(6))
	dir, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	fsys := NewUnconfined(dir)
	path := filepath.Join(dir, "a.txt")
	f.Fuzz(func(t *testing.T, text, old, repl string, all bool, chunk uint8) {
		edit := fs.EditRequest{Old: old, New: repl, ReplaceAll: all}
		wantBytes, want, wantErr := editOnce(t, fsys, path, text, edit, holdAll)
		gotBytes, got, gotErr := editOnce(t, fsys, path, text, edit, streamAll(1+int(chunk)))
		if !sameError(gotErr, wantErr) {
			t.Fatalf("streamed error %v, in memory %v", gotErr, wantErr)
		}
		if gotBytes != wantBytes {
			t.Fatalf("streamed edit stored %q, in memory %q", gotBytes, wantBytes)
		}
		if wantErr != nil {
			return
		}
		if got.Replacements != want.Replacements || !got.Omitted || got.Before != "" || got.After != "" || want.Omitted {
			t.Fatalf("streamed outcome %+v, in memory %+v", got, want)
		}
	})
}

// The streamed path's results, spelled out, at every small chunk size.
func TestStreamEdit(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	ambiguous := func(n string) string {
		return `old_string matched ` + n + ` times in "` + path + `"; provide a more specific old_string or set replace_all to true`
	}
	for _, tc := range []struct {
		name, text string
		edit       fs.EditRequest
		stored     string // the file afterwards
		n          int    // replacements
		code, msg  string // the failure
	}{
		{"CRLF kept, match across CRLF", "\xEF\xBB\xBFone\r\ntwo\r\nthree\r\n", fs.EditRequest{Old: "one\ntwo", New: "1\n2"},
			"\xEF\xBB\xBF1\r\n2\r\nthree\r\n", 1, "", ""},
		{"dominant LF collapses CRLF", "a\r\nb\nc\n", fs.EditRequest{Old: "b", New: "B"}, "a\nB\nc\n", 1, "", ""},
		{"lone CR stays", "a\rb\r\n", fs.EditRequest{Old: "\r", New: "-", ReplaceAll: true}, "a-b\r\n", 1, "", ""},
		{"replace all, non-overlapping", "aaaaa", fs.EditRequest{Old: "aa", New: "b", ReplaceAll: true}, "bba", 2, "", ""},
		{"multibyte across chunks", "xé✓😀y", fs.EditRequest{Old: "✓😀", New: "ok"}, "xéoky", 1, "", ""},
		// A periodic old_string makes the search for where a match may
		// still start costly: past its budget the bytes are kept instead.
		{"periodic old_string", strings.Repeat("a", 24) + "bc", fs.EditRequest{Old: "aaaaaaaab", New: "X"},
			strings.Repeat("a", 16) + "Xc", 1, "", ""},
		{"periodic old_string, a late mismatch", "aabaabaabaabaabaabcac" + "aabaabaabaabcb",
			fs.EditRequest{Old: "aabaabaabaabcb", New: "X"}, "aabaabaabaabaabaabcacX", 1, "", ""},
		{"periodic old_string, replace all", "bbbbbbca" + "bbbbbbbbbbbbbbcccabbbbbbbc" + "bbbbbbca",
			fs.EditRequest{Old: "bbbbbbca", New: "X", ReplaceAll: true}, "X" + "bbbbbbbbbbbbbbcccabbbbbbbc" + "X", 2, "", ""},
		{"ambiguous after the write began", "ab....ab", fs.EditRequest{Old: "ab", New: "x"},
			"ab....ab", 0, fs.CodeAmbiguousEdit, ambiguous("2")},
		{"counts every match", "ab ab ab", fs.EditRequest{Old: "ab", New: "x"},
			"ab ab ab", 0, fs.CodeAmbiguousEdit, ambiguous("3")},
		{"not found", "abc", fs.EditRequest{Old: "x", New: "y"},
			"abc", 0, fs.CodeEditNotFound, `old_string was not found in "` + path + `"`},
		{"invalid UTF-8 beats ambiguous", "a a \xff", fs.EditRequest{Old: "a", New: "b"},
			"a a \xff", 0, fs.CodeNotText, `cannot edit "` + path + `": invalid UTF-8 text`},
		{"cut rune at the end", "abc\xe2\x9c", fs.EditRequest{Old: "abc", New: "x"},
			"abc\xe2\x9c", 0, fs.CodeNotText, `cannot edit "` + path + `": invalid UTF-8 text`},
		{"NUL after invalid UTF-8 is binary", "a\xffb\x00", fs.EditRequest{Old: "a", New: "b"},
			"a\xffb\x00", 0, fs.CodeNotText, `cannot edit "` + path + `": binary file`},
	} {
		for chunk := 1; chunk <= 8; chunk++ {
			stored, out, err := editOnce(t, f, path, tc.text, tc.edit, streamAll(chunk))
			if stored != tc.stored {
				t.Errorf("%s, chunk %d: stored %q, want %q", tc.name, chunk, stored, tc.stored)
			}
			if tc.code != "" {
				wantFsErr(t, err, tc.code, tc.msg)
				continue
			}
			if err != nil {
				t.Fatalf("%s, chunk %d: %v", tc.name, chunk, err)
			}
			if want := (fs.EditOutcome{Replacements: tc.n, Version: out.Version, Omitted: true}); *out != want {
				t.Errorf("%s, chunk %d: outcome %+v, want %+v", tc.name, chunk, *out, want)
			}
		}
	}
}

// Through EditText, a file just above maxHeldText streams: the outcome is
// Omitted and the file is edited in place of its one line, in CRLF.
func TestEditStreamsAboveHeldText(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "big.txt")
	line := strings.Repeat("x", 62) + "\r\n"
	body := strings.Repeat(line, maxHeldText/len(line)/2+1)
	write(t, path, body+"the one line\r\n"+body, 0o644)
	tg := mustResolve(t, f, path)
	out, err := f.EditText(context.Background(), tg, fs.EditRequest{Old: "one line\n", New: "edited\nline\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (fs.EditOutcome{Replacements: 1, Version: f.postVersion(tg), Omitted: true}); *out != want {
		t.Errorf("outcome %+v, want %+v", *out, want)
	}
	b, _ := os.ReadFile(path)
	if want := body + "the edited\r\nline\r\n" + body; string(b) != want {
		t.Errorf("stored %d bytes, want %d", len(b), len(want))
	}
}

// An edit whose result would be longer than the held limit streams too,
// even when the file itself is held: a replace_all that lengthens its
// matches, or a long replacement.
func TestEditStreamsLongResult(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	cfg := editConfig{held: 10, chunk: 3}
	all := func(repl string) fs.EditRequest { return fs.EditRequest{Old: "a", New: repl, ReplaceAll: true} }
	for _, tc := range []struct {
		edit    fs.EditRequest
		stored  string
		n       int
		omitted bool
	}{
		{all("b"), "b.b.b.b.", 4, false},
		{all("bb"), "bb.bb.bb.bb.", 4, true},
		{all("a\na"), "a\na.a\na.a\na.a\na.", 4, true},
		{fs.EditRequest{Old: "a.a.a.a.", New: "0123456789"}, "0123456789", 1, false},
		{fs.EditRequest{Old: "a.a.a.a.", New: "0123456789a"}, "0123456789a", 1, true},
		{fs.EditRequest{Old: ".", New: "0123456789", ReplaceAll: false}, "a.a.a.a.", 0, false},
	} {
		stored, out, err := editOnce(t, f, path, "a.a.a.a.", tc.edit, cfg)
		if tc.n == 0 {
			wantFsErr(t, err, fs.CodeAmbiguousEdit,
				`old_string matched 4 times in "`+path+`"; provide a more specific old_string or set replace_all to true`)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if stored != tc.stored || out.Omitted != tc.omitted || out.Replacements != tc.n {
			t.Errorf("%+v: stored %q, outcome %+v; want %q, Omitted %v", tc.edit, stored, *out, tc.stored, tc.omitted)
		}
		if !out.Omitted && (out.Before != "a.a.a.a." || out.After != tc.stored) {
			t.Errorf("%+v: Before %q, After %q", tc.edit, out.Before, out.After)
		}
	}
}

// A replacement of writeChunk bytes or more is written as it is, not
// buffered, and still takes the file's style, whichever its own.
func TestStreamEditLongReplacement(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	lines := strings.Repeat("line\n", writeChunk/5+1)
	crlfLines := strings.ReplaceAll(lines, "\n", "\r\n")
	for _, tc := range []struct{ name, text, repl, stored string }{
		{"LF into CRLF", "a\r\nMARK\r\nb\r\n", lines, "a\r\n" + crlfLines + "\r\nb\r\n"},
		{"CRLF into LF", "a\nMARK\nb\n", crlfLines, "a\n" + lines + "\nb\n"},
	} {
		stored, out, err := editOnce(t, f, path, tc.text, fs.EditRequest{Old: "MARK", New: tc.repl}, streamAll(7))
		if err != nil {
			t.Fatal(err)
		}
		if stored != tc.stored || out.Replacements != 1 {
			t.Errorf("%s: stored %d bytes (%d replacements), want %d bytes", tc.name, len(stored), out.Replacements, len(tc.stored))
		}
	}
}

// A streamed edit cancelled at any of its checkpoints (one per chunk, and
// the staging's) fails "edit aborted", leaving the file as it was and no
// staging behind; past the last one it succeeds.
func TestStreamEditAborts(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	const text = "one\r\ntwo\r\nthree\r\n"
	tg := mustResolve(t, f, path)
	aborted := 0
	for at := int32(1); ; at++ {
		write(t, path, text, 0o644)
		_, err := f.editText(flipAt(at), tg, fs.EditRequest{Old: "two", New: "2"}, nil, streamAll(4))
		if err == nil {
			break
		}
		wantFsErr(t, err, fs.CodeAborted, "edit aborted")
		aborted++
		if b, _ := os.ReadFile(path); string(b) != text {
			t.Fatalf("abort at check %d changed the file: %q", at, b)
		}
		if left := leftovers(t, root); len(left) != 0 {
			t.Fatalf("abort at check %d left staging behind: %v", at, left)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "one\r\n2\r\nthree\r\n" {
		t.Errorf("stored %q", b)
	}
	// Before reading (1), beside it before the mkdir and before staging (2),
	// per chunk of 4 (5 for 17 bytes), per write (1: the result is one
	// buffer), before the rename (1).
	if aborted != 10 {
		t.Errorf("%d checkpoints, want 10", aborted)
	}
}

// BenchmarkEditWholeFile edits a 64 MiB file into one line and back: an
// old_string, then a new_string, as large as the file. Both stream; one op
// is one edit (the mean of the two) with its fsyncs, and peak-RSS-MiB
// includes the benchmark's own two copies of the text.
func BenchmarkEditWholeFile(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "a.txt")
	textFile(b, path, 64<<20, 16)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	text := string(data)
	data = nil
	f := NewUnconfined(dir)
	tg := mustResolveB(b, f, path)
	edits := []fs.EditRequest{{Old: text, New: "one line\n"}, {Old: "one line\n", New: text}}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	debug.FreeOSMemory()
	resetPeakRSS()
	i := 0
	for b.Loop() {
		out, err := f.EditText(context.Background(), tg, edits[i%2], nil)
		if err != nil {
			b.Fatal(err)
		}
		if !out.Omitted || out.Replacements != 1 {
			b.Fatalf("outcome %+v", *out)
		}
		i++
	}
	reportPeakRSS(b)
}
