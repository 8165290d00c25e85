package toolfs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/internal/peakrss"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/registry"
)

// writeArgsJSON is the JSON arguments of a write of size bytes of 100-byte
// lines to name, built in place: the content never exists as a separate
// string, as with arguments that arrive from a model.
func writeArgsJSON(name string, size int) []byte {
	var buf bytes.Buffer
	buf.Grow(size + size/25 + 64) // 3 escapes per 100-byte line
	w := bufio.NewWriter(&buf)
	w.WriteString(`{"file_path":` + strconv.Quote(name) + `,"content":"`)
	n := 0
	for ; n+100 <= size; n += 100 {
		s := strconv.Itoa(n / 100)
		w.WriteString(s)
		w.WriteString(` \"`)
		for range 96 - len(s) {
			w.WriteByte('x')
		}
		w.WriteString(`\"\n`)
	}
	for ; n < size; n++ {
		w.WriteByte('x')
	}
	w.WriteString(`"}`)
	w.Flush()
	return buf.Bytes()
}

// The content writeArgsJSON carries.
func writeContent(size int) string {
	var a struct{ Content string }
	if err := json.Unmarshal(writeArgsJSON("x", size), &a); err != nil {
		panic(err)
	}
	return a.Content
}

func BenchmarkWriteText8MiB(b *testing.B)  { benchWriteText(b, 8<<20, false) }
func BenchmarkWriteText64MiB(b *testing.B) { benchWriteText(b, 64<<20, false) }

// The provider's write of a content copied afresh for every call: the floor
// of any tool whose content arrives inside JSON arguments, since it must be
// copied out of them once (on a machine with costly page faults, the copy
// into new memory is most of that).
func BenchmarkWriteTextCopied8MiB(b *testing.B)  { benchWriteText(b, 8<<20, true) }
func BenchmarkWriteTextCopied64MiB(b *testing.B) { benchWriteText(b, 64<<20, true) }

// benchWriteText: the provider's own write of a new file, the floor of the
// write tool.
func benchWriteText(b *testing.B, size int, copied bool) {
	dir := b.TempDir()
	fsys := fslocal.NewUnconfined(dir)
	content := writeContent(size)
	ctx := context.Background()
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		target, err := fsys.Resolve(ctx, fmt.Sprintf("w%d.txt", i), "")
		if err != nil {
			b.Fatal(err)
		}
		text := content
		if copied {
			text = strings.Clone(content)
		}
		if _, err := fsys.WriteText(ctx, target, text, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.Remove(target.Key)
		b.StartTimer()
	}
}

func BenchmarkExecuteWrite8MiB(b *testing.B)  { benchExecuteWrite(b, 8<<20) }
func BenchmarkExecuteWrite64MiB(b *testing.B) { benchExecuteWrite(b, 64<<20) }

// benchExecuteWrite: the write tool through registry.Execute, arguments
// validated and decoded, on the same provider.
func benchExecuteWrite(b *testing.B, size int) {
	e := setup(b, options{direct: true})
	raw := make([][]byte, 2) // two names, each removed after its write
	for i := range raw {
		raw[i] = writeArgsJSON(e.path(fmt.Sprintf("w%d.txt", i)), size)
	}
	ctx := context.Background()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := e.tools.Execute(ctx, &registry.Call{ID: "w", Tool: "write", Args: raw[i%2]})
		if r.IsError {
			b.Fatal(r.Text)
		}
		b.StopTimer()
		os.Remove(e.path(fmt.Sprintf("w%d.txt", i%2)))
		b.StartTimer()
	}
}

// TestWritePeakMemory writes 64 MiB through registry.Execute in a fresh
// process and checks its peak resident set stays under three times the
// content: the arguments, the decoded content, and what the rest of the
// process needs.
func TestWritePeakMemory(t *testing.T) {
	const size = 64 << 20
	if os.Getenv("TOOLFS_WRITE_PEAK_CHILD") == "1" {
		writePeakChild(t, size)
		return
	}
	if testing.Short() || raceEnabled || runtime.GOOS != "linux" {
		t.Skip("a 64 MiB write in a child process without the race detector; maxrss is in KiB on Linux")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWritePeakMemory$")
	cmd.Env = append(os.Environ(), "TOOLFS_WRITE_PEAK_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	peak, _ := peakrss.Of(cmd.ProcessState)
	t.Logf("peak RSS of a process writing 64 MiB through registry.Execute: %d KiB (%.2fx the content)", peak>>10, float64(peak)/size)
	if peak > 3*size {
		t.Fatalf("peak RSS %d KiB, want under %d KiB", peak>>10, 3*size>>10)
	}
}

func writePeakChild(t *testing.T, size int) {
	raw := writeArgsJSON("big.txt", size)
	e := setup(t, options{direct: true})
	r := e.tools.Execute(context.Background(), &registry.Call{ID: "w", Tool: "write", Args: raw, Session: newSession(e.dir)})
	if r.IsError {
		t.Fatal(r.Text)
	}
	if st, err := os.Stat(e.path("big.txt")); err != nil || st.Size() != int64(size) {
		t.Fatalf("wrote %v, %v", st, err)
	}
}
