package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

// needs is a plugin that injects FS and a service named at run time.
func needs(name string) runtime.Plugin {
	return runtime.Func("reader", func(*runtime.Context) error { return nil },
		runtime.Inject(FS, runtime.Named(name)))
}

func TestWaitActiveNamesMissingServices(t *testing.T) {
	root, _ := newRoot(t)
	mustPlugin(t, root, provider("local", "local"), nil)
	f := mustPlugin(t, root, needs("tool"), nil) // a typo of "tools"
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err := f.WaitActive(ctx)
	var na *runtime.NotActiveError
	if !errors.As(err, &na) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitActive: %v", err)
	}
	if want := `runtime: plugin "reader" is still PENDING, waiting for service "tool": context deadline exceeded`; err.Error() != want {
		t.Fatalf("message:\n got %s\nwant %s", err, want)
	}
	equal(t, "missing", na.Missing, []string{"tool"})
	if na.Plugin != "reader" || na.State != runtime.Pending {
		t.Fatalf("error fields: %+v", na)
	}

	// With neither service, both are named, in inject order.
	other := runtime.New(runtime.WithLogger(discardLogger()))
	defer other.Close()
	g := mustPlugin(t, other, needs("tool"), nil)
	done, stop := context.WithCancel(t.Context())
	stop()
	if err := g.WaitActive(done); err == nil || err.Error() !=
		`runtime: plugin "reader" is still PENDING, waiting for services "fs", "tool": context canceled` {
		t.Fatalf("two missing: %v", err)
	}
}

func TestWaitActiveOutcomes(t *testing.T) {
	tool := runtime.NewService[int]("wait-tool")
	failing := runtime.Func("failing", func(*runtime.Context) error { return errors.New("boom") })
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, root *runtime.Context) error
		want string
	}{
		{"active at once", func(t *testing.T, root *runtime.Context) error {
			return mustPlugin(t, root, runtime.Func("plain", func(*runtime.Context) error { return nil }), nil).
				WaitActive(t.Context())
		}, ""},
		{"provided while waiting", func(t *testing.T, root *runtime.Context) error {
			f := mustPlugin(t, root, runtime.Func("dep", func(*runtime.Context) error { return nil }, runtime.Inject(tool)), nil)
			go func() { _ = tool.Provide(root, 1) }()
			return f.WaitActive(t.Context())
		}, ""},
		{"apply failed", func(t *testing.T, root *runtime.Context) error {
			return mustPlugin(t, root, failing, nil).WaitActive(t.Context())
		}, "boom"},
		{"invalid config", func(t *testing.T, root *runtime.Context) error {
			p := runtime.Configured("cfg", func(*runtime.Context, item9Config) error { return nil })
			return mustPlugin(t, root, p, map[string]any{"limit": 0}).WaitActive(t.Context())
		}, `invalid config for plugin "cfg": missing required property "root"; "limit" must be a positive integer`},
		{"disposed while waiting", func(t *testing.T, root *runtime.Context) error {
			f := mustPlugin(t, root, runtime.Func("dep", func(*runtime.Context) error { return nil }, runtime.Inject(tool)), nil)
			go func() { _ = f.Dispose() }()
			return f.WaitActive(t.Context())
		}, `runtime: plugin "dep" was disposed`},
		{"apply still running", func(t *testing.T, root *runtime.Context) error {
			started, release := make(chan *runtime.Fiber), make(chan struct{})
			defer close(release)
			go func() {
				_, _ = root.Plugin(runtime.Func("slow", func(ctx *runtime.Context) error {
					started <- ctx.Fiber()
					<-release
					return nil
				}), nil)
			}()
			f := <-started
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			return f.WaitActive(ctx)
		}, `runtime: plugin "slow" is still LOADING: context canceled`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, _ := newRoot(t)
			var err error
			within(t, 5*time.Second, func() { err = tc.run(t, root) })
			if got := errString(err); got != tc.want {
				t.Fatalf("WaitActive:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCloseWarnsAboutPendingPlugins(t *testing.T) {
	root, sink := newRoot(t)
	mustPlugin(t, root, provider("local", "local"), nil)
	mustPlugin(t, root, needs("tool"), nil)
	mustPlugin(t, root, runtime.Func("parent", func(ctx *runtime.Context) error {
		_, err := ctx.Plugin(runtime.Func("child", func(*runtime.Context) error { return nil },
			runtime.Inject(runtime.Named("model"), FS)), nil)
		return err
	}), nil)
	mustPlugin(t, root, runtime.Configured("cfg", func(*runtime.Context, item9Config) error { return nil }), nil)
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range sink.Records() {
		if r.Level == slog.LevelWarn {
			got = append(got, r.Attrs["plugin"]+": "+r.Message+" missing="+r.Attrs["missing"]+" error="+r.Attrs["error"])
		}
	}
	equal(t, "warnings", got, []string{
		"reader: plugin still pending missing=[tool] error=",
		"child: plugin still pending missing=[model] error=",
		`cfg: plugin still pending missing= error=invalid config for plugin "cfg": missing required property "root"`,
	})
}
