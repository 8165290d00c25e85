package fslocal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/internal/peakrss"
	"github.com/gordis-run/gordis/plugins/fs"
)

// The calls of TestEditHugeArgumentsMemory, made in TestHugeFileMemory's
// child process: a new_string (LF, then CRLF), then an old_string, as
// large as the file.
const (
	hugeNew     = "edit with a 64 MiB new_string"
	hugeNewCRLF = "edit with a 64 MiB new_string in CRLF"
	hugeOld     = "edit with a 64 MiB old_string"
)

// hugeArg is the 64 MiB argument: the text of the file hugeOld edits.
func hugeArg() string { return strings.Repeat(hugeLine("\n"), 64<<20/80) }

// hugeArgCRLF is a 64 MiB argument in CRLF.
func hugeArgCRLF() string { return strings.Repeat(hugeLine("\r\n"), 64<<20/80) }

func init() {
	size := int64(64 << 20 / 80 * 80)
	hugeCalls[hugeNew] = hugeCall{size + len64("MARK"), false, func(ctx context.Context, f *FS, t fs.Target) error {
		return editHuge(ctx, f, t, fs.EditRequest{Old: "MARK", New: hugeArg()})
	}}
	hugeCalls[hugeNewCRLF] = hugeCall{size + len64("MARK"), false, func(ctx context.Context, f *FS, t fs.Target) error {
		return editHuge(ctx, f, t, fs.EditRequest{Old: "MARK", New: hugeArgCRLF()})
	}}
	hugeCalls[hugeOld] = hugeCall{size + len64("one line\n"), false, func(ctx context.Context, f *FS, t fs.Target) error {
		return editHuge(ctx, f, t, fs.EditRequest{Old: hugeArg(), New: "one line\n"})
	}}
}

func editHuge(ctx context.Context, f *FS, t fs.Target, edit fs.EditRequest) error {
	out, err := f.EditText(ctx, t, edit, nil)
	if err == nil && (!out.Omitted || out.Replacements != 1) {
		err = fmt.Errorf("outcome %+v", out)
	}
	return err
}

// An edit whose argument is as large as the file holds that argument once
// and streams the rest: its peak RSS stays under 64 MiB plus the
// arguments, twice the content. A result above maxHeldText streams even
// from a small file, a new_string is normalised as it is written, and an
// old_string as long as the file is matched without a copy of it or a
// window of its size.
func TestEditHugeArgumentsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 64 MiB file")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory of the 64 MiB argument passes the bound: run without -race")
	}
	if _, ok := peakrss.Self(); !ok {
		t.Skip("no VmHWM in /proc/self/status to measure a child's peak RSS")
	}
	_, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	write(t, path, "a\nMARK\nb\n", 0o644)
	runHuge(t, hugeNew, path)
	arg := hugeArg()
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\n"+arg+"\nb\n" {
		t.Fatalf("after the %s: %d bytes (%v), want %d", hugeNew, len(b), err, len(arg)+4)
	}
	write(t, path, "a\nMARK\nb\n", 0o644)
	runHuge(t, hugeNewCRLF, path)
	lf := strings.ReplaceAll(hugeArgCRLF(), "\r\n", "\n")
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\n"+lf+"\nb\n" {
		t.Fatalf("after the %s: %d bytes (%v), want %d", hugeNewCRLF, len(b), err, len(lf)+4)
	}
	write(t, path, arg, 0o644)
	runHuge(t, hugeOld, path)
	if b, err := os.ReadFile(path); err != nil || string(b) != "one line\n" {
		t.Errorf("after the %s: %.40q (%v)", hugeOld, b, err)
	}
}
