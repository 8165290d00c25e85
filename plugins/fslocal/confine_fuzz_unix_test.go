//go:build unix

package fslocal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

// FuzzResolveConfined checks confined resolution against its definition on
// a workspace full of links (inside, outside, upward, absolute, a loop):
// a resolved key is always the workspace or below it, and, where the kernel
// resolves the display path to a file inside, it is that file's real path;
// a refusal is FS_SANDBOX_DENIED.
func FuzzResolveConfined(f *testing.F) {
	for _, seed := range []string{"a.txt", "d/f.txt", "in/f.txt", "abs/f.txt", "up/ws/a.txt", "up/out/s.txt",
		"out/s.txt", "../out/s.txt", "/etc/hostname", "d/../in/./f.txt", "loop/x", "in/../../x", "d/new/deep.txt", "dangling"} {
		f.Add(seed)
	}
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, dir := range []string{filepath.Join(ws, "d"), out} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for name, content := range map[string]string{"ws/a.txt": "a", "ws/d/f.txt": "f", "out/s.txt": "s"} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{"in": "d", "abs": filepath.Join(ws, "d"), "up": "..",
		"out": out, "loop": "loop", "dangling": "nowhere", "d/back": "../a.txt"} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			f.Fatal(err)
		}
	}
	p, err := Open(Config{Cwd: ws})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { p.Close() })

	f.Fuzz(func(t *testing.T, path string) {
		tg, err := p.Resolve(context.Background(), path, "")
		if err != nil {
			var fe *fs.Error
			if !errors.As(err, &fe) {
				t.Fatalf("Resolve(%q): %T %v", path, err, err)
			}
			return
		}
		if tg.Key != ws && !strings.HasPrefix(tg.Key, ws+"/") {
			t.Fatalf("Resolve(%q).Key = %q: outside the workspace", path, tg.Key)
		}
		if real, err := filepath.EvalSymlinks(tg.Path); err == nil && (real == ws || strings.HasPrefix(real, ws+"/")) {
			if real != tg.Key {
				t.Fatalf("Resolve(%q).Key = %q, want the real path %q", path, tg.Key, real)
			}
		}
	})
}
