package fslocal

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// crashEnv names the workspace of the re-executed test binary that
// writes until it is killed.
const crashEnv = "GORDIS_FSLOCAL_CRASH_WORKSPACE"

// generation is the text of the file name at generation g: every line
// names g, so an edit of " gen g " to " gen g+1 " (replace all) turns
// generation g into g+1, and a file that mixes two generations, or is
// cut short, is no generation at all. "big" is 3 MiB.
func generation(name string, g int) string {
	line := fmt.Sprintf("%s gen %d line\n", name, g)
	n := 4
	if name == "big" {
		n = 3 << 20 / len(line)
	}
	return strings.Repeat(line, n)
}

// TestCrashDuringWrites kills (SIGKILL) processes that write, edit and
// create files, small and 3 MiB, at random moments, round after round
// for about 3 seconds (1 with -short), three workspaces at a time. After
// every kill each file holds exactly one generation, never a mix and
// never nothing; listings show no staging directory; and a provider's
// start (SweepRoots, in odd rounds) or the next write into the directory
// (even rounds) leaves none behind. Writers and checks use confined
// providers, as the default deployment does.
func TestCrashDuringWrites(t *testing.T) {
	if ws := os.Getenv(crashEnv); ws != "" {
		writeUntilKilled(ws)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	budget := 3 * time.Second
	if testing.Short() {
		budget = time.Second
	}
	_, root := fixture(t)
	start := time.Now()
	var rounds, crashedMidWrite atomic.Int64
	var wg sync.WaitGroup
	// Rounds go on past the budget (up to 3 times it) until a kill has
	// landed during a write, so that a short run still proves something.
	more := func() bool {
		spent := time.Since(start)
		return !t.Failed() && (spent < budget || crashedMidWrite.Load() == 0 && spent < 3*budget)
	}
	for range 3 {
		wg.Go(func() {
			for more() {
				round := rounds.Add(1)
				ws := filepath.Join(root, strconv.FormatInt(round, 10))
				staged, ok := crashRound(t, exe, ws, round%2 == 0)
				if !ok {
					return
				}
				if staged {
					crashedMidWrite.Add(1)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d rounds, %d killed while staging", rounds.Load(), crashedMidWrite.Load())
	if crashedMidWrite.Load() == 0 && !t.Failed() {
		t.Errorf("no kill in %d rounds landed during a write", rounds.Load())
	}
}

// crashRound seeds the workspace ws, kills a writer in it and checks
// what is left, then that a start (SweepRoots) or, when byWrite, the next
// write sweeps the staging directories away. staged reports that the
// kill left some; ok is false when the round failed.
func crashRound(t *testing.T, exe, ws string, byWrite bool) (staged, ok bool) {
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Error(err)
		return false, false
	}
	for _, name := range []string{"small", "big"} {
		if err := os.WriteFile(filepath.Join(ws, name+".txt"), []byte(generation(name, 0)), 0o644); err != nil {
			t.Error(err)
			return false, false
		}
	}
	if err := killMidWrite(exe, ws, rand.N(40*time.Millisecond)); err != nil {
		t.Error(err)
		return false, false
	}
	all, err := os.ReadDir(ws)
	if err != nil {
		t.Error(err)
		return false, false
	}
	left, replaced := 0, 0
	for _, e := range all {
		switch {
		case isStagingName(e.Name()):
			left++
		case e.Name() == "small.txt", e.Name() == "big.txt":
			replaced++
			fallthrough
		default:
			checkGeneration(t, filepath.Join(ws, e.Name()))
		}
	}
	if replaced != 2 {
		t.Errorf("%s: a replaced file is missing after the kill", ws)
	}
	ctx := context.Background()
	f, err := Open(Config{Cwd: ws})
	if err != nil {
		t.Error(err)
		return false, false
	}
	defer f.Close()
	root := fs.Target{Key: ws, Path: ws}
	if entries, err := f.ListDir(ctx, root); err != nil || len(entries) != len(all)-left {
		t.Errorf("%s: %d entries listed (%v); %d staging directories among %d", ws, len(entries), err, left, len(all))
	}
	if byWrite {
		after := filepath.Join(ws, "after.txt")
		_, err = f.WriteText(ctx, fs.Target{Key: after, Path: after}, "x", nil)
	} else {
		err = f.SweepRoots(ctx)
	}
	if err != nil {
		t.Error(err)
		return false, false
	}
	if entries, err := os.ReadDir(ws); err == nil {
		for _, e := range entries {
			if isStagingName(e.Name()) {
				t.Errorf("%s: staging left after the sweep: %s", ws, e.Name())
				return false, false
			}
		}
	}
	return left > 0, true
}

// killMidWrite runs writeUntilKilled on ws in a child process and kills
// it once it has started writing and delay has passed.
func killMidWrite(exe, ws string, delay time.Duration) error {
	cmd := exec.Command(exe, "-test.run=^TestCrashDuringWrites$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+ws, "GOCOVERDIR=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "writing\n" {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("child said %q, %v\n%s", line, err, stderr.Bytes())
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil {
		return err
	}
	cmd.Wait()
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || status.Signal() != syscall.SIGKILL {
		return fmt.Errorf("child ended before the kill: %v\n%s", cmd.ProcessState, stderr.Bytes())
	}
	return nil
}

// writeUntilKilled is the child: it cycles through a replacing write and
// an edit of each file, then creates a new one, until it is killed.
func writeUntilKilled(ws string) {
	ctx := context.Background()
	must := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	f, err := Open(Config{Cwd: ws})
	must(err)
	target := func(name string) fs.Target {
		tg, err := f.Resolve(ctx, name+".txt", "")
		must(err)
		return tg
	}
	fmt.Println("writing")
	for g, k := 0, 0; ; g, k = g+2, k+1 {
		for _, name := range []string{"small", "big"} {
			tg := target(name)
			_, err := f.WriteText(ctx, tg, generation(name, g+1), nil)
			must(err)
			edit := fs.EditRequest{Old: fmt.Sprintf(" gen %d ", g+1), New: fmt.Sprintf(" gen %d ", g+2), ReplaceAll: true}
			_, err = f.EditText(ctx, tg, edit, nil)
			must(err)
		}
		name := fmt.Sprintf("new-%d", k)
		_, err := f.WriteText(ctx, target(name), generation(name, 0), nil)
		must(err)
	}
}

// checkGeneration checks that the file at path holds one generation
// whole (a created file only generation 0).
func checkGeneration(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	name := strings.TrimSuffix(filepath.Base(path), ".txt")
	rest, _ := strings.CutPrefix(string(data), name+" gen ")
	num, _, _ := strings.Cut(rest, " ")
	g, err := strconv.Atoi(num)
	if err != nil || string(data) != generation(name, g) || strings.HasPrefix(name, "new-") && g != 0 {
		line, _, _ := strings.Cut(string(data), "\n")
		t.Errorf("%s after the kill: %d bytes that are no whole generation (first line %q)", path, len(data), line)
	}
}
