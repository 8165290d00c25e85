package runtime_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

// logRecord is one captured slog record, flattened.
type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

// logSink is a slog.Handler that keeps records for assertions.
type logSink struct {
	mu    *sync.Mutex
	recs  *[]logRecord
	attrs []slog.Attr
}

func newLogSink() *logSink { return &logSink{mu: new(sync.Mutex), recs: new([]logRecord)} }

func (h *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (h *logSink) WithGroup(string) slog.Handler            { return h }
func (h *logSink) WithAttrs(as []slog.Attr) slog.Handler {
	return &logSink{mu: h.mu, recs: h.recs, attrs: append(slices.Clone(h.attrs), as...)}
}

func (h *logSink) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	for _, a := range h.attrs {
		rec.Attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool { rec.Attrs[a.Key] = a.Value.String(); return true })
	h.mu.Lock()
	*h.recs = append(*h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *logSink) records() []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.recs)
}

// newRoot returns a root that logs into a sink and is closed at cleanup.
func newRoot(t testing.TB) (*runtime.Context, *logSink) {
	t.Helper()
	sink := newLogSink()
	root := runtime.New(runtime.WithLogger(slog.New(sink)))
	t.Cleanup(func() { _ = root.Close() })
	return root, sink
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
