package fslocal

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
)

// the token is dev:ino:size:mtimeNs:ctimeNs.
func TestVersionFormat(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	write(t, path, "hello", 0o644)
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d:%d:%d:%d:%d", st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano())
	info, err := f.Stat(context.Background(), mustResolve(t, f, path))
	if err != nil || string(info.Version) != want {
		t.Fatalf("version = %v, %v; want %s", info, err, want)
	}
}
