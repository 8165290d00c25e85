package fslocal

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// deepFile makes a/b/c/f.txt (3 levels deep) under a fresh directory.
func deepFile(b *testing.B) (dir, rel string) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	rel = filepath.Join("a", "b", "c", "f.txt")
	if err := os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rel), []byte("x"), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir, rel
}

// BenchmarkResolveStat is what every tool call starts with, Resolve then
// Stat of a file 3 levels deep, through the workspace's root (confined) and
// by absolute names (unconfined).
func BenchmarkResolveStat(b *testing.B) {
	dir, rel := deepFile(b)
	for _, bc := range []struct {
		name string
		f    *FS
	}{{"confined", confined(b, Config{Cwd: dir})}, {"unconfined", NewUnconfined(dir)}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				tg, err := bc.f.Resolve(ctx, rel, "")
				if err != nil {
					b.Fatal(err)
				}
				if info, err := bc.f.Stat(ctx, tg); err != nil || info == nil {
					b.Fatal(info, err)
				}
			}
		})
	}
}
