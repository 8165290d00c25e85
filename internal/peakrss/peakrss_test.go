package peakrss_test

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/gordis-run/gordis/internal/peakrss"
)

// A child that holds 32 MiB in memory reports a peak of at least that.
func TestOfChild(t *testing.T) {
	if os.Getenv("PEAKRSS_CHILD") == "1" {
		b := make([]byte, 32<<20)
		for i := range b {
			b[i] = byte(i)
		}
		runtime.KeepAlive(b)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOfChild$")
	cmd.Env = append(os.Environ(), "PEAKRSS_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n, ok := peakrss.Of(cmd.ProcessState)
	if !ok {
		t.Skip("this platform reports no peak RSS")
	}
	if n < 32<<20 || n > 1<<30 {
		t.Fatalf("peak RSS %d bytes, want between 32 MiB and 1 GiB", n)
	}
}

func TestOfNil(t *testing.T) {
	if _, ok := peakrss.Of(nil); ok {
		t.Fatal("a process that never ran has no peak RSS")
	}
}

// After holding 32 MiB, this process's own peak is at least that; where
// the platform does not say, Self says so.
func TestSelf(t *testing.T) {
	b := make([]byte, 32<<20)
	for i := range b {
		b[i] = byte(i)
	}
	runtime.KeepAlive(b)
	n, ok := peakrss.Self()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("no VmHWM on Linux")
		}
		t.Skip("this platform reports no VmHWM")
	}
	if n < 32<<20 {
		t.Fatalf("peak RSS %d bytes, want at least 32 MiB", n)
	}
}
