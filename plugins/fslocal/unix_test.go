//go:build unix

package fslocal

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// new files are 0600 whatever the umask; a replacement keeps the
// permission bits and drops setuid/setgid/sticky.
func TestWriteModes(t *testing.T) {
	f, root := fixture(t)
	ctx := context.Background()
	old := syscall.Umask(0o277) // would make a plain create 0400
	defer syscall.Umask(old)

	fresh := mustResolve(t, f, "new.txt")
	if _, err := f.WriteText(ctx, fresh, "x", nil); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, fresh.Key); m != 0o600 {
		t.Errorf("new file mode %v, want 0600", m)
	}
	for _, tc := range []struct {
		set  os.FileMode
		want os.FileMode
	}{
		{0o640, 0o640},
		{0o755 | os.ModeSetuid | os.ModeSetgid, 0o755},
		{0o700 | os.ModeSticky, 0o700},
	} {
		path := filepath.Join(root, "m.txt")
		write(t, path, "old", 0o600)
		if err := os.Chmod(path, tc.set); err != nil {
			t.Fatal(err)
		}
		tg := mustResolve(t, f, path)
		if _, err := f.WriteText(ctx, tg, "new", nil); err != nil {
			t.Fatal(err)
		}
		if m := mode(t, path); m != tc.want {
			t.Errorf("write over %v: mode %v, want %v", tc.set, m, tc.want)
		}
		if err := os.Chmod(path, tc.set); err != nil {
			t.Fatal(err)
		}
		if _, err := f.EditText(ctx, tg, fs.EditRequest{Old: "new", New: "newer"}, nil); err != nil {
			t.Fatal(err)
		}
		if m := mode(t, path); m != tc.want {
			t.Errorf("edit over %v: mode %v, want %v", tc.set, m, tc.want)
		}
	}
	if left := leftovers(t, root); len(left) != 0 {
		t.Errorf("staging left behind: %v", left)
	}
}

// FIFOs, sockets and devices are "other"; reading, writing or editing one
// is refused without opening it (a FIFO would block).
func TestSpecialFiles(t *testing.T) {
	f, root := fixture(t)
	ctx := context.Background()
	fifo := filepath.Join(root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(root, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	entries, err := f.ListDir(ctx, mustResolve(t, f, "."))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type != fs.TypeOther || e.Version == "" || e.Size != -1 {
			t.Errorf("%s: %+v, want other with a version and no size", e.Name, e)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{fifo, filepath.Join(root, "sock"), "/dev/null"} {
			tg := mustResolve(t, f, p)
			if info, err := f.Stat(ctx, tg); err != nil || info.Type != fs.TypeOther {
				t.Errorf("Stat(%s) = %+v, %v", p, info, err)
			}
			_, err := f.ReadText(ctx, tg)
			wantFsErr(t, err, fs.CodeNotRegularFile, `cannot read "`+tg.Path+`": not a regular file`)
			_, err = f.StreamText(ctx, tg)
			wantFsErr(t, err, fs.CodeNotRegularFile, `cannot read "`+tg.Path+`": not a regular file`)
			_, err = f.WriteText(ctx, tg, "x", nil)
			wantFsErr(t, err, fs.CodeNotRegularFile, `cannot write "`+tg.Path+`": not a regular file`)
			_, err = f.EditText(ctx, tg, fs.EditRequest{Old: "a", New: "b"}, nil)
			wantFsErr(t, err, fs.CodeNotRegularFile, `cannot edit "`+tg.Path+`": not a regular file`)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a special file blocked")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
}
