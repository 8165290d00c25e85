package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/internal/peakrss"
)

// replayWriteSize is the content of the write TestReplayWritePeakMemory
// replays.
const replayWriteSize = 64 << 20

// A 64 MiB write through demo replay peaks under 2x its content, read from
// a file or from a pipe (it peaked at 544 MiB, 8.5x, when the line went
// through a json.Decoder and the value was encoded whole, and at 143 MiB
// when the registry decoded the content into a copy of its own, or when a
// line from a pipe was joined from chunks): the line is held once, and the
// content is decoded where it stands. The replay runs in a child, which
// reports its own peak.
func TestReplayWritePeakMemory(t *testing.T) {
	if file := os.Getenv("DEMO_REPLAY_PEAK_FILE"); file != "" {
		replayPeakChild(t, file)
		return
	}
	if testing.Short() || raceEnabled || runtime.GOOS != "linux" {
		t.Skip("a 64 MiB write in a child process without the race detector, where VmHWM says its peak")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "write.jsonl")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, `{"tool":"write","args":{"file_path":%q,"content":"`, filepath.Join(dir, "big.txt"))
	line := strings.Repeat("x", 63) + `\n`
	for range replayWriteSize / 64 {
		w.WriteString(line)
	}
	w.WriteString("\"}}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, from := range []string{"file", "pipe"} {
		t.Run(from, func(t *testing.T) {
			os.Remove(filepath.Join(dir, "big.txt"))
			cmd := exec.Command(os.Args[0], "-test.run=^TestReplayWritePeakMemory$", "-test.v")
			cmd.Env = append(os.Environ(), "DEMO_REPLAY_PEAK_FILE="+file, "DEMO_REPLAY_PEAK_FROM="+from)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Logf("%s", out)
			if st, err := os.Stat(filepath.Join(dir, "big.txt")); err != nil || st.Size() != replayWriteSize {
				t.Fatalf("wrote %v, %v", st, err)
			}
		})
	}
}

// replayPeakChild replays file, named or through a pipe on stdin, and
// checks its own peak.
func replayPeakChild(t *testing.T, file string) {
	args := []string{"--no-policy", "--workspace", filepath.Dir(file), file}
	var stdin io.Reader
	if os.Getenv("DEMO_REPLAY_PEAK_FROM") == "pipe" {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() {
			io.Copy(w, f)
			w.Close()
		}()
		args, stdin = args[:len(args)-1], r
	}
	var stdout, stderr strings.Builder
	if code := runReplay(args, stdin, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), `"isError":false`) {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	peak, ok := peakrss.Self()
	if !ok {
		t.Skip("no VmHWM here")
	}
	t.Logf("peak RSS of demo replay writing 64 MiB from a %s: %d KiB (%.2fx the content)", os.Getenv("DEMO_REPLAY_PEAK_FROM"), peak>>10, float64(peak)/replayWriteSize)
	if peak > 2*replayWriteSize {
		t.Fatalf("peak RSS %d KiB, want under %d KiB", peak>>10, 2*replayWriteSize>>10)
	}
}
