package runtime_test

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// newRoot returns a root that logs into a recorder and is closed at cleanup.
func newRoot(t testing.TB) (*runtime.Context, *runtimetest.Logs) {
	t.Helper()
	logs := runtimetest.NewLogs()
	return runtimetest.New(t, runtime.WithLogger(slog.New(logs))), logs
}

// within fails the test if fn does not return in time (a deadlock).
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not finish within %v (deadlock?)", d)
	}
}

// mustPlugin applies p and fails the test if it is refused.
func mustPlugin(t testing.TB, ctx *runtime.Context, p runtime.Plugin, config any) *runtime.Fiber {
	t.Helper()
	f, err := ctx.Plugin(p, config)
	if err != nil {
		t.Fatalf("Plugin(%s): %v", p.Name(), err)
	}
	return f
}

// recorder collects strings from several goroutines.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.got = nil
	r.mu.Unlock()
}

// statusLog records every status change of fibers named name.
func statusLog(t testing.TB, root *runtime.Context, name string) *recorder {
	t.Helper()
	rec := &recorder{}
	if _, err := runtime.StatusEvent.On(root, func(c runtime.StatusChange) error {
		if c.Fiber.Name() == name {
			rec.add(c.To.String())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rec
}

func equal[T comparable](t testing.TB, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
