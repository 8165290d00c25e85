package fslocal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkWriteReplace replaces a file with content of the same size,
// fsyncs included: the path every write tool call over an existing file
// takes (staging, metadata kept, commit, cleanup), on an unconfined and
// on a confined provider.
func BenchmarkWriteReplace(b *testing.B) {
	for _, provider := range [...]string{"unconfined", "confined"} {
		for _, size := range []int{1 << 10, 8 << 20} {
			b.Run(fmt.Sprintf("%s/%dKiB", provider, size>>10), func(b *testing.B) {
				content := strings.Repeat(strings.Repeat("x", 79)+"\n", size/80+1)[:size]
				dir := b.TempDir()
				f := NewUnconfined(dir)
				if provider == "confined" {
					f = confined(b, Config{Cwd: dir})
				}
				tg := mustResolveB(b, f, filepath.Join(dir, "out.txt"))
				if _, err := f.WriteText(context.Background(), tg, content, nil); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.WriteText(context.Background(), tg, content, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// sweepOf opens dir by its name and sweeps it.
func sweepOf(ctx context.Context, dir string) (removed, busy int, err error) {
	d, err := os.Open(dir)
	if err != nil {
		return 0, 0, err
	}
	defer d.Close()
	return sweep(ctx, d)
}

// BenchmarkSweep sweeps a directory of 10,000 files and no staging
// directory: what the first write into such a directory pays once.
func BenchmarkSweep(b *testing.B) {
	dir := b.TempDir()
	for i := range 10000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%05d.go", i)), []byte("package x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if removed, busy, err := sweepOf(context.Background(), dir); removed != 0 || busy != 0 || err != nil {
			b.Fatalf("removed %d, busy %d, %v", removed, busy, err)
		}
	}
}
