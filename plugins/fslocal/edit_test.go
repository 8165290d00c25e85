package fslocal

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// an edit that fails after its staging directory was
// made (beside the read) leaves the file byte-identical and no staging
// behind, and reports the contract's failure even though the text checks
// ran beside the match.
func TestEditFailureLeavesNoStaging(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	for _, tc := range []struct {
		name, text, old string
		code, tail      string
	}{
		{"not found", "abc\n", "x", fs.CodeEditNotFound, ""},
		{"ambiguous", "a a\n", "a", fs.CodeAmbiguousEdit, ""},
		{"binary beats not found", "abc\x00", "x", fs.CodeNotText, "binary file"},
		{"binary beats invalid UTF-8", "a\xff\x00", "a", fs.CodeNotText, "binary file"},
		{"invalid UTF-8 beats ambiguous", "a a \xff", "a", fs.CodeNotText, "invalid UTF-8 text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(t, path, tc.text, 0o644)
			tg := mustResolve(t, f, path)
			_, err := f.EditText(context.Background(), tg, fs.EditRequest{Old: tc.old, New: "y"}, nil)
			var msg string
			switch tc.code {
			case fs.CodeEditNotFound:
				msg = `old_string was not found in "` + tg.Path + `"`
			case fs.CodeAmbiguousEdit:
				msg = `old_string matched 2 times in "` + tg.Path + `"; provide a more specific old_string or set replace_all to true`
			default:
				msg = `cannot edit "` + tg.Path + `": ` + tc.tail
			}
			wantFsErr(t, err, tc.code, msg)
			if b, _ := os.ReadFile(path); string(b) != tc.text {
				t.Errorf("file changed: %q", b)
			}
			if left := leftovers(t, root); len(left) != 0 {
				t.Errorf("staging left behind: %v", left)
			}
		})
	}
}

// a CRLF file larger than one write chunk is stored whole in
// CRLF (the conversion streams through a chunk-sized buffer), with its BOM.
func TestEditCRLFAcrossChunks(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "crlf.txt")
	line := strings.Repeat("x", 61) + "\r\n"
	body := strings.Repeat(line, 3*writeChunk/len(line))
	write(t, path, "\xEF\xBB\xBF"+body+"OLD\r\n"+body, 0o644)
	out, err := f.EditText(context.Background(), mustResolve(t, f, path), fs.EditRequest{Old: "OLD\n", New: "NEW\nNEW\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lfBody := strings.ReplaceAll(body, "\r\n", "\n")
	if want := lfBody + "NEW\nNEW\n" + lfBody; out.After != want {
		t.Errorf("After differs from the LF-normalised result (%d vs %d bytes)", len(out.After), len(want))
	}
	b, _ := os.ReadFile(path)
	if want := "\xEF\xBB\xBF" + body + "NEW\r\nNEW\r\n" + body; string(b) != want {
		t.Errorf("stored %d bytes, want %d in CRLF with the BOM", len(b), len(want))
	}
}

// The replaced file is held open across the rename and let go on another
// goroutine: after a run of edits and writes, the process's descriptors
// come back to where they were. The collector is off, so that no
// finalizer closes a file the provider forgot.
func TestReplacedFileIsReleased(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	f, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	write(t, path, "one\n", 0o644)
	tg := mustResolve(t, f, path)
	base := openFDs(t)
	for i := range 20 {
		if _, err := f.WriteText(context.Background(), tg, "one\n", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.EditText(context.Background(), tg, fs.EditRequest{Old: "one", New: "two"}, nil); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
	}
	n := openFDs(t)
	for deadline := time.Now().Add(5 * time.Second); n > base && time.Now().Before(deadline); n = openFDs(t) {
		time.Sleep(5 * time.Millisecond)
	}
	if n > base {
		t.Errorf("%d descriptors still open after the edits (%d before)", n, base)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}

// Every refused operation closes what it opened: refusals of each kind
// (binary, ambiguous, invalid, no match, stale, not regular, missing, a
// dangling link), in memory and streamed, on both providers, leave the
// process's descriptors where they were. The collector is off, so that no
// finalizer closes a file an operation forgot.
func TestFailuresCloseDescriptors(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	eachProvider(t, func(t *testing.T, f *FS, root string) {
		ctx := context.Background()
		write(t, filepath.Join(root, "bin"), "a\x00b", 0o644)
		write(t, filepath.Join(root, "amb"), "aa aa", 0o644)
		write(t, filepath.Join(root, "bad"), "a\xffb", 0o644)
		write(t, filepath.Join(root, "big"), strings.Repeat("aa\n", 100), 0o644)
		mustLink(t, filepath.Join(root, "gone"), filepath.Join(root, "dangling"))
		if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
			t.Fatal(err)
		}
		streamed := editConfig{held: 10, chunk: 16}
		base := openFDs(t)
		for range 10 {
			for _, name := range []string{"bin", "amb", "bad", "big", "dangling", "dir", "missing"} {
				tg := mustResolve(t, f, name)
				for _, cfg := range []editConfig{defaultEdit, streamed} {
					f.editText(ctx, tg, fs.EditRequest{Old: "aa", New: "b"}, nil, cfg)
					f.editText(ctx, tg, fs.EditRequest{Old: "zz", New: "b"}, nil, cfg)
					f.editText(ctx, tg, fs.EditRequest{Old: "aa", New: "b"}, &fs.EditIntent{Version: "old"}, cfg)
				}
				f.ReadText(ctx, tg)
				f.StreamTextFrom(ctx, tg, "old", 0)
				f.ListDir(ctx, tg)
				f.WriteText(ctx, tg, "x", &fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: "old"})
				f.scanLines(ctx, tg, "old", scanConfig{chunk: 8, workers: 2}, func([]byte, int) error { return nil })
			}
		}
		n := openFDs(t)
		for deadline := time.Now().Add(5 * time.Second); n > base && time.Now().Before(deadline); n = openFDs(t) {
			time.Sleep(5 * time.Millisecond)
		}
		if n > base {
			t.Errorf("%d descriptors open after the refusals (%d before)", n, base)
		}
	})
}
