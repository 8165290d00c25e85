package fslocal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

// flipCtx reports cancellation from its at-th Err call on, which lands an
// abort at an exact checkpoint inside an operation.
type flipCtx struct {
	context.Context
	calls atomic.Int32
	at    int32
}

func (c *flipCtx) Err() error {
	if c.calls.Add(1) >= c.at {
		return context.Canceled
	}
	return nil
}

func flipAt(at int32) *flipCtx { return &flipCtx{Context: context.Background(), at: at} }

// an abort that lands
// after a checkpoint was passed is still reported, never a result. The
// counts follow the checkpoints in order; for the 3-byte file: an edit
// checks before reading (1), then twice while reading and, beside the read,
// before the mkdir and before staging (2 to 5, interleaved), per chunk (6)
// and before the rename (7); a create
// checks before the mkdir (1), before staging (2), per chunk (3) and before
// the rename (4).
func TestAbortCheckpoints(t *testing.T) {
	f, root := fixture(t)
	write(t, filepath.Join(root, "a.txt"), "abc", 0o644)
	file := mustResolve(t, f, "a.txt")
	absent := mustResolve(t, f, "absent.txt")
	dir := mustResolve(t, f, ".")
	// Both directories are swept beforehand: the first write's sweep
	// checks the context too, and would shift the counts.
	if err := os.Mkdir(filepath.Join(root, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, filepath.Join(root, "new")} {
		if err := Sweep(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name string
		at   int32
		run  func(ctx context.Context) error
		msg  string
	}{
		{"resolve after resolving", 2, func(ctx context.Context) error { _, err := f.Resolve(ctx, "a.txt", ""); return err }, "resolve aborted"},
		{"stat in flight, absent", 2, func(ctx context.Context) error { _, err := f.Stat(ctx, absent); return err }, "stat aborted"},
		{"lstat in flight", 2, func(ctx context.Context) error { _, err := f.Lstat(ctx, "a.txt", ""); return err }, "lstat aborted"},
		{"list after readdir", 2, func(ctx context.Context) error { _, err := f.ListDir(ctx, dir); return err }, "list aborted"},
		{"list at a child", 3, func(ctx context.Context) error { _, err := f.ListDir(ctx, dir); return err }, "list aborted"},
		{"read mid-read", 2, func(ctx context.Context) error { _, err := f.ReadText(ctx, file); return err }, "read aborted"},
		{"edit before reading", 1, func(ctx context.Context) error {
			_, err := f.EditText(ctx, file, fs.EditRequest{Old: "a", New: "b"}, nil)
			return err
		}, "edit aborted"},
		{"edit mid-read", 2, func(ctx context.Context) error {
			_, err := f.EditText(ctx, file, fs.EditRequest{Old: "a", New: "b"}, nil)
			return err
		}, "edit aborted"},
		{"edit at the last read or staging check", 5, func(ctx context.Context) error {
			_, err := f.EditText(ctx, file, fs.EditRequest{Old: "a", New: "b"}, nil)
			return err
		}, "edit aborted"},
		{"edit before the rename", 7, func(ctx context.Context) error {
			_, err := f.EditText(ctx, file, fs.EditRequest{Old: "a", New: "b"}, nil)
			return err
		}, "edit aborted"},
		{"write before staging", 2, func(ctx context.Context) error {
			_, err := f.WriteText(ctx, mustResolve(t, f, "new/b.txt"), "x", nil)
			return err
		}, "write aborted"},
		{"write before the rename", 4, func(ctx context.Context) error {
			_, err := f.WriteText(ctx, mustResolve(t, f, "new/c.txt"), "x", nil)
			return err
		}, "write aborted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantFsErr(t, tc.run(flipAt(tc.at)), fs.CodeAborted, tc.msg)
		})
	}
	if b, _ := os.ReadFile(file.Key); string(b) != "abc" {
		t.Errorf("aborted edits changed the file: %q", b)
	}
	for _, name := range []string{"new/b.txt", "new/c.txt"} {
		if _, err := os.Lstat(filepath.Join(root, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("aborted write created %s: %v", name, err)
		}
	}
	if left := leftovers(t, filepath.Join(root, "new")); len(left) != 0 {
		t.Errorf("staging left behind: %v", left)
	}
}

// a rename that fails (the target became a directory meanwhile) is
// cleaned up and mapped.
func TestRenameFailure(t *testing.T) {
	f, root := fixture(t)
	defer func() { beforeRename = nil }()
	tg := mustResolve(t, f, "a.txt")
	beforeRename = func(key string) error { return os.Mkdir(key, 0o755) }
	_, err := f.WriteText(context.Background(), tg, "x", nil)
	wantFsErr(t, err, fs.CodeIO, `cannot write "`+tg.Path+`": file exists`)
	if !errors.Is(err, syscall.EEXIST) && !errors.Is(err, syscall.EISDIR) {
		t.Errorf("cause = %v", errors.Unwrap(err))
	}
	if left := leftovers(t, root); len(left) != 0 {
		t.Errorf("staging left behind: %v", left)
	}
}

// a file that vanished right after the mutation has the sentinel
// version.
func TestPostVersionMissing(t *testing.T) {
	tg := fs.Target{Key: "/nonexistent/gordis/x", Path: "/x"}
	if v := NewUnconfined("").postVersion(tg); v != "missing:/nonexistent/gordis/x" {
		t.Errorf("postVersion = %q", v)
	}
}

// hookCtx runs fn at its first Err call: the edit's first checkpoint comes
// after the guard checked the name and before the file is opened, which is
// where another process could swap the file.
type hookCtx struct {
	context.Context
	once atomic.Bool
	fn   func()
}

func (c *hookCtx) Err() error {
	if c.once.CompareAndSwap(false, true) {
		c.fn()
	}
	return nil
}

// the version guard holds for the bytes the edit reads. A file
// replaced between the guard's stat and the open is stale, and the
// replacement is left as it is.
func TestEditGuardChecksTheOpenedFile(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	write(t, path, "old text\n", 0o644)
	target := mustResolve(t, f, "a.txt")
	info, err := f.Stat(context.Background(), target)
	if err != nil || info == nil {
		t.Fatal(info, err)
	}
	swap := &hookCtx{Context: context.Background(), fn: func() {
		write(t, path+".new", "new text\n", 0o644)
		if err := os.Rename(path+".new", path); err != nil {
			t.Error(err)
		}
	}}
	_, err = f.EditText(swap, target, fs.EditRequest{Old: "text", New: "TEXT"}, &fs.EditIntent{Version: info.Version})
	if !errors.Is(err, fs.ErrStaleVersion) || err.Error() != `cannot edit "`+path+`": file changed since it was read` {
		t.Fatalf("err = %v, want the stale-version error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new text\n" {
		t.Fatalf("file = %q, want the replacement untouched", b)
	}
}
