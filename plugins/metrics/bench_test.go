//go:build unix

package metrics_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/plugins/metrics"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// BenchmarkCall is the cost of a call with the plugin and without it: an
// empty tool (the observer's cost on its own) and a small read through the
// default deployment. The loop ends with a Flush, so the observers' work,
// done on other goroutines, is inside the time and the allocations. It also
// reports the process's CPU time per call (cpu-ns/op), which other programs
// on a busy machine disturb less than the wall time.
func BenchmarkCall(b *testing.B) {
	variants := []struct {
		name string
		plug bool
	}{{"bare", false}, {"metrics", true}}
	for _, v := range variants {
		b.Run("noop/"+v.name, func(b *testing.B) {
			root := runtimetest.New(b)
			r := registry.New(root, registry.Config{})
			if err := r.Register(root, registry.Tool{Name: "noop", Execute: func(context.Context, *registry.Call) (any, error) { return "ok", nil }}); err != nil {
				b.Fatal(err)
			}
			call := &registry.Call{ID: "1", Tool: "noop"}
			run(b, root, v.plug, func() *registry.Result { return r.Execute(context.Background(), call) })
		})
	}
	for _, v := range variants {
		b.Run("read/"+v.name, func(b *testing.B) {
			d, cleanup, err := gordis.Build(gordis.Options{Workspace: b.TempDir(), Logger: slog.New(runtimetest.NewLogs())})
			if err != nil {
				b.Fatal(err)
			}
			defer cleanup()
			if err := os.WriteFile(filepath.Join(d.Workspace, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			session := agent.NewSession(d.Workspace)
			defer session.Close()
			args := json.RawMessage(`{"file_path":"a.txt"}`)
			run(b, d.Root, v.plug, func() *registry.Result {
				return d.Tools.Execute(context.Background(), &registry.Call{ID: "1", Tool: "read", Args: args, Session: session})
			})
		})
	}
}

// run times call, after plugging the metrics plugin on root if plug.
func run(b *testing.B, root *runtime.Context, plug bool, call func() *registry.Result) {
	if plug {
		runtimetest.Plug(b, root, metrics.Plugin, nil)
	}
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		if res := call(); res.IsError {
			b.Fatal(res.Text)
		}
	}
	root.Flush()
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the user and system time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
