package metrics_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

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
// done on other goroutines, is inside the time and the allocations.
func BenchmarkCall(b *testing.B) {
	for _, observed := range []bool{false, true} {
		name := "bare"
		if observed {
			name = "metrics"
		}
		b.Run("noop/"+name, func(b *testing.B) {
			root := runtimetest.New(b)
			r := registry.New(root, registry.Config{})
			if err := r.Register(root, registry.Tool{Name: "noop", Execute: func(context.Context, *registry.Call) (any, error) { return "ok", nil }}); err != nil {
				b.Fatal(err)
			}
			plugIf(b, observed, root)
			call := &registry.Call{ID: "1", Tool: "noop"}
			run(b, root, func() *registry.Result { return r.Execute(context.Background(), call) })
		})
		b.Run("read/"+name, func(b *testing.B) {
			d, cleanup, err := gordis.Build(gordis.Options{Workspace: b.TempDir(), Logger: slog.New(runtimetest.NewLogs())})
			if err != nil {
				b.Fatal(err)
			}
			defer cleanup()
			if err := os.WriteFile(filepath.Join(d.Workspace, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			plugIf(b, observed, d.Root)
			session := agent.NewSession(d.Workspace)
			defer session.Close()
			args := json.RawMessage(`{"file_path":"a.txt"}`)
			run(b, d.Root, func() *registry.Result {
				return d.Tools.Execute(context.Background(), &registry.Call{ID: "1", Tool: "read", Args: args, Session: session})
			})
		})
	}
}

func plugIf(b *testing.B, observed bool, root *runtime.Context) {
	if observed {
		runtimetest.Plug(b, root, metrics.Plugin, nil)
	}
}

func run(b *testing.B, root *runtime.Context, call func() *registry.Result) {
	b.ReportAllocs()
	for b.Loop() {
		if res := call(); res.IsError {
			b.Fatal(res.Text)
		}
	}
	root.Flush()
}
