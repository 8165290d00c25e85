package runtimetest_test

import (
	"errors"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// recordingT is a testing.TB that records failures instead of reporting
// them, so that the helpers' own failures can be asserted on. Fatalf ends
// the goroutine, as testing.T's does.
type recordingT struct {
	testing.TB
	mu       sync.Mutex
	failures []string
	cleanups []func()
}

func (r *recordingT) Helper() {}

func (r *recordingT) Cleanup(fn func()) { r.cleanups = append(r.cleanups, fn) }

func (r *recordingT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recordingT) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	goruntime.Goexit()
}

// run calls fn as a test body on its own goroutine, then the cleanups, and
// returns the failures.
func (r *recordingT) run(fn func(testing.TB)) []string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	for _, c := range slices.Backward(r.cleanups) {
		c()
	}
	return r.failures
}

var (
	Tools   = runtime.NewService[string]("tools")
	Workdir = runtime.NewService[string]("workdir")
)

func TestPlug(t *testing.T) {
	needsTool := runtime.Func("reader", func(*runtime.Context) error { return nil },
		runtime.Inject(Tools, runtime.Named("tool")))
	for _, tc := range []struct {
		name string
		plug func(t testing.TB, root *runtime.Context)
		want []string
	}{
		{"active", func(t testing.TB, root *runtime.Context) {
			if err := Tools.Provide(root, "registry"); err != nil {
				t.Fatalf("%v", err)
			}
			f := runtimetest.Plug(t, root, runtime.Func("user", func(*runtime.Context) error { return nil }, runtime.Inject(Tools)), nil)
			if f.State() != runtime.Active {
				t.Errorf("state %v", f.State())
			}
		}, nil},
		{"missing services", func(t testing.TB, root *runtime.Context) {
			runtimetest.Plug(t, root, needsTool, nil)
			t.Errorf("Plug returned")
		}, []string{`plugging reader: runtime: plugin "reader" is still PENDING, waiting for services "tools", "tool": not active when Plugin returned`}},
		{"apply error", func(t testing.TB, root *runtime.Context) {
			runtimetest.Plug(t, root, runtime.Func("failing", func(*runtime.Context) error { return errors.New("boom") }), nil)
		}, []string{"plugging failing: boom"}},
		{"refused", func(t testing.TB, root *runtime.Context) {
			runtimetest.Plug(t, root, nil, nil)
		}, []string{"plugging: runtime: invalid plugin: nil plugin"}},
		{"failing teardown at close", func(t testing.TB, root *runtime.Context) {
			runtimetest.Plug(t, root, runtime.Func("leaky", func(ctx *runtime.Context) error {
				_, err := ctx.Effect(func() (func() error, error) {
					return func() error { return errors.New("teardown broke") }, nil
				})
				return err
			}), nil)
		}, []string{"closing the root: teardown broke"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &recordingT{TB: t}
			var root *runtime.Context
			got := rt.run(func(tb testing.TB) {
				root = runtimetest.New(tb)
				tc.plug(tb, root)
			})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("failures:\n got %q\nwant %q", got, tc.want)
			}
			if _, err := root.Plugin(runtime.Func("late", func(*runtime.Context) error { return nil }), nil); !errors.Is(err, runtime.ErrInactive) {
				t.Fatalf("the root is not closed after the test: %v", err)
			}
		})
	}
}

func TestLogsRecordsRuntimeAndPluginLogs(t *testing.T) {
	logs := runtimetest.NewLogs()
	root := runtimetest.New(t, runtime.WithLogger(slog.New(logs)))
	runtimetest.Plug(t, root, runtime.Func("greeter", func(ctx *runtime.Context) error {
		ctx.Logger().WithGroup("req").With("id", 7).Info("hello", "name", "ada",
			slog.Group("size", "w", 2, "h", 3), slog.Group("", "inline", true))
		return nil
	}), nil)
	if _, err := root.Plugin(runtime.Func("reader", func(*runtime.Context) error { return nil }, runtime.Inject(Workdir)), nil); err != nil {
		t.Fatal(err)
	}
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range logs.Records() {
		var attrs []string
		for k, v := range r.Attrs {
			attrs = append(attrs, k+"="+v)
		}
		slices.Sort(attrs)
		got = append(got, r.Level.String()+" "+r.Message+" "+strings.Join(attrs, " "))
	}
	want := []string{
		"INFO hello plugin=greeter req.id=7 req.inline=true req.name=ada req.size.h=3 req.size.w=2",
		"WARN plugin still pending missing=[workdir] plugin=reader",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("records:\n got %q\nwant %q", got, want)
	}
}

func TestLogsConcurrentUse(t *testing.T) {
	logs := runtimetest.NewLogs()
	log := slog.New(logs).With("worker", "w")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { log.With("n", i).Info("step") })
	}
	wg.Wait()
	if n := len(logs.Records()); n != 8 {
		t.Fatalf("%d records, want 8", n)
	}
}
