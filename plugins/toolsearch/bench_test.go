package toolsearch_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// benchTree writes files Go-like sources of about 2 KiB in directories of
// 100, once per benchmark binary and size.
func benchTree(b *testing.B, files int) *env {
	b.Helper()
	e := setup(b, options{})
	for d := 0; d*100 < files; d++ {
		dir := e.path(fmt.Sprintf("pkg%03d/sub", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := d * 100; f < min(files, (d+1)*100); f++ {
			var src []byte
			src = fmt.Appendf(src, "package p%d\n\nimport \"io\"\n\n", f)
			for i := range 20 {
				src = fmt.Appendf(src, "// T%d_%d is a type.\ntype T%d_%d struct{ r io.Reader }\n\n", f, i, f, i)
			}
			if f%10 == 0 {
				src = fmt.Appendf(src, "func (t *T%d_0) Close() error { return nil }\n\nfunc main() {}\n", f)
			}
			name := filepath.Join(dir, fmt.Sprintf("f%05d.go", f))
			if f%2 == 1 {
				name = filepath.Join(filepath.Dir(dir), fmt.Sprintf("f%05d.go", f))
			}
			if err := os.WriteFile(name, src, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return e
}

// The tools over a tree of 3,000 files, beside rg with as many threads as
// GOMAXPROCS where it is installed: each sub-benchmark is one call.
func BenchmarkSearch(b *testing.B) {
	e := benchTree(b, 3000)
	rg, _ := exec.LookPath("rg")
	threads := strconv.Itoa(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		name, tool string
		args       args
		rg         []string
	}{
		{"grep-literal", "grep", args{"pattern": "func main"}, []string{"--json", "-j", threads, "--regexp=func main"}},
		{"grep-regex", "grep", args{"pattern": `func \(\w+ \*\w+\) Close\(`}, []string{"--json", "-j", threads, `--regexp=func \(\w+ \*\w+\) Close\(`}},
		{"grep-include", "grep", args{"pattern": "io.Reader", "include": "*.go"}, []string{"--json", "-j", threads, "--regexp=io.Reader", "--glob=*.go"}},
		{"glob", "glob", args{"pattern": "**/*.go"}, []string{"--files", "-j", threads, "--glob=**/*.go", "--sort=modified", "--no-ignore", "--hidden"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := e.call(c.tool, c.args); r.IsError {
					b.Fatal(r.Text)
				}
			}
		})
		if rg == "" {
			continue
		}
		b.Run(c.name+"/rg", func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(rg, c.rg...)
				cmd.Dir = e.ws
				if out, err := cmd.Output(); err != nil || len(out) == 0 {
					b.Fatalf("rg: %v", err)
				}
			}
		})
	}
}

// BenchmarkGrepLargeFile searches one 64 MiB file holding one match, beside
// rg: the bytes allocated per call are a chunk's at most, whatever the
// file's size.
func BenchmarkGrepLargeFile(b *testing.B) {
	const size = 64 << 20
	e := setup(b, options{})
	f, err := os.Create(e.path("large.txt"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	line := "the quick brown fox jumps over the lazy dog 0123456789\n"
	for n := 0; n < size; n += len(line) {
		w.WriteString(line)
	}
	w.WriteString("a needle here\n")
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		b.Fatal(err)
	}
	rg, _ := exec.LookPath("rg")
	for _, pattern := range []string{"needle", `n\w+e\s+h`} {
		b.Run(pattern, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			for b.Loop() {
				if r := e.call("grep", args{"pattern": pattern}); r.IsError || !strings.HasPrefix(r.Text, "Found 1 match") {
					b.Fatal(r.Text)
				}
			}
		})
		if rg == "" {
			continue
		}
		b.Run(pattern+"/rg", func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				cmd := exec.Command(rg, "--json", "--regexp="+pattern)
				cmd.Dir = e.ws
				if out, err := cmd.Output(); err != nil || len(out) == 0 {
					b.Fatalf("rg: %v", err)
				}
			}
		})
	}
}
