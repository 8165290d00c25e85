package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

// ---- a third-party plugin package, written only against the public API ----

// Added is the event the host emits when a note is added.
var Added = runtime.NewEvent[string]("notes/added")

// Tally is the service the counter plugin provides.
var Tally = runtime.NewService[*Counter]("tally")

// CounterConfig is the counter's config. Defaults and bounds live in the
// struct tags; the runtime fills and checks them before the plugin runs.
type CounterConfig struct {
	Step  int    `json:"step,omitempty" jsonschema:"minimum=1,default=1"`
	Label string `json:"label,omitempty" jsonschema:"default=notes"`
}

// Counter counts added notes.
type Counter struct {
	mu    sync.Mutex
	cfg   CounterConfig
	count int
}

func (c *Counter) add() {
	c.mu.Lock()
	c.count += c.cfg.Step
	c.mu.Unlock()
}

// Total returns the count so far.
func (c *Counter) Total() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%s: %d", c.cfg.Label, c.count)
}

// Close is the teardown: Constructor runs it when the fiber is disposed.
func (c *Counter) Close() error {
	fmt.Println("counter closed with", c.Total())
	return nil
}

// CounterPlugin builds a Counter, listens to Added and provides Tally. The
// listener and the service belong to the fiber: nothing to unregister.
var CounterPlugin = runtime.Constructor("counter", func(ctx *runtime.Context, cfg CounterConfig) (*Counter, error) {
	c := &Counter{cfg: cfg}
	if _, err := Added.On(ctx, func(string) error { c.add(); return nil }); err != nil {
		return nil, err
	}
	if err := Tally.Provide(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
})

// Reporter injects Tally: it waits until a counter is ACTIVE and is torn
// down before the counter goes away.
var Reporter = runtime.Func("reporter", func(ctx *runtime.Context) error {
	tally, err := Tally.Get(ctx)
	if err != nil {
		return err
	}
	_, err = ctx.Effect(func() (func() error, error) {
		fmt.Println("reporter up")
		return func() error {
			fmt.Println("reporter down, last saw", tally.Total())
			return nil
		}, nil
	})
	return err
}, runtime.Inject(Tally))

// ---- the host ----------------------------------------------------------------

func Example() {
	root := runtime.New()
	defer root.Close()

	reporter, _ := root.Plugin(Reporter, nil)
	fmt.Println("reporter:", reporter.State()) // no tally yet

	counter, err := root.Plugin(CounterPlugin, map[string]any{"step": 2})
	if err != nil {
		panic(err)
	}
	fmt.Println("reporter:", reporter.State())

	_ = Added.Emit(root, "first")
	_ = Added.Emit(root, "second")

	// Plugin refuses only invalid plugins; a config error belongs to the
	// fiber, which stays PENDING until a valid Update.
	bad, _ := root.Plugin(CounterPlugin, map[string]any{"step": 0})
	fmt.Println(bad.State(), bad.Wait())

	_ = counter.Dispose()
	fmt.Println("reporter:", reporter.State())

	// Output:
	// reporter: PENDING
	// reporter up
	// reporter: ACTIVE
	// PENDING invalid config for plugin "counter": "step" must be a positive integer
	// reporter down, last saw notes: 4
	// counter closed with notes: 4
	// reporter: PENDING
}

// Workspace is a service that two isolated contexts provide separately.
var Workspace = runtime.NewService[string]("workspace")

func ExampleContext_Isolate() {
	root := runtime.New()
	defer root.Close()

	show := runtime.Func("show", func(ctx *runtime.Context) error {
		dir, err := Workspace.Get(ctx)
		fmt.Println("working in", dir)
		return err
	}, runtime.Inject(Workspace))

	for _, dir := range []string{"/src/app", "/src/lib"} {
		ws := root.Isolate(Workspace.Name())
		if err := Workspace.Provide(ws, dir); err != nil {
			panic(err)
		}
		if _, err := ws.Plugin(show, nil); err != nil {
			panic(err)
		}
	}
	_, ok := Workspace.Lookup(root)
	fmt.Println("the root has one:", ok)

	// Output:
	// working in /src/app
	// working in /src/lib
	// the root has one: false
}

func ExampleFiber_WaitActive() {
	root := runtime.New()
	defer root.Close()

	// Nothing provides "tool": a misspelt name, as a host reading plugin
	// lists from a file might have.
	reader := runtime.Func("reader", func(*runtime.Context) error { return nil },
		runtime.Inject(runtime.Named("tool")))
	fiber, err := root.Plugin(reader, nil)
	if err != nil {
		panic(err)
	}
	loaded, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err = fiber.WaitActive(loaded)
	var notActive *runtime.NotActiveError
	if errors.As(err, &notActive) {
		fmt.Println(notActive.Missing)
	}
	fmt.Println(err)

	// Output:
	// [tool]
	// runtime: plugin "reader" is still PENDING, waiting for service "tool": context deadline exceeded
}

// Limits is a service whose callers may lower its cap for a subtree.
var Limits = runtime.NewService[*Limiter]("limits")

// Limiter reads the caller's Intercept layers on every call.
type Limiter struct{ Defaults LimitConfig }

// LimitConfig is the limiter's config; omitempty lets a layer set one field.
type LimitConfig struct {
	ReadLimit int `json:"readLimit,omitempty"`
}

func (l *Limiter) Cap(caller *runtime.Context) int {
	cfg, err := runtime.ResolveConfig(caller, Limits.Name(), l.Defaults)
	if err != nil {
		return l.Defaults.ReadLimit
	}
	return cfg.ReadLimit
}

func ExampleContext_Intercept() {
	root := runtime.New()
	defer root.Close()
	if err := Limits.Provide(root, &Limiter{LimitConfig{ReadLimit: 2000}}); err != nil {
		panic(err)
	}

	report := runtime.Func("report", func(ctx *runtime.Context) error {
		l, err := Limits.Get(ctx)
		if err != nil {
			return err
		}
		fmt.Println(ctx.Fiber().Name(), "may read", l.Cap(ctx), "lines")
		return nil
	})
	small := root.Intercept(Limits.Name(), LimitConfig{ReadLimit: 200})
	for _, ctx := range []*runtime.Context{root, small} {
		if _, err := ctx.Plugin(report, nil); err != nil {
			panic(err)
		}
	}

	// Output:
	// report may read 2000 lines
	// report may read 200 lines
}

func ExampleContext_DisposePlugin() {
	root := runtime.New()
	defer root.Close()

	v1 := runtime.Configured("greeter", func(ctx *runtime.Context, c map[string]string) error {
		fmt.Println("v1 says", c["greeting"])
		return nil
	})
	for _, ctx := range []*runtime.Context{root, root.Isolate(Workspace.Name())} {
		if _, err := ctx.Plugin(v1, map[string]string{"greeting": "hello"}); err != nil {
			panic(err)
		}
	}

	// Reload: dispose every fiber of v1 and plug v2 where each was, with
	// its config.
	v2 := runtime.Configured("greeter", func(ctx *runtime.Context, c map[string]string) error {
		fmt.Println("v2 says", c["greeting"])
		return nil
	})
	old := root.Fibers(v1)
	if err := root.DisposePlugin(v1); err != nil {
		panic(err)
	}
	for _, f := range old {
		if _, err := f.Parent().Plugin(v2, f.Config()); err != nil {
			panic(err)
		}
	}
	fmt.Println(len(root.Plugins()), "plugin,", len(root.Fibers(v2)), "fibers")

	// Output:
	// v1 says hello
	// v1 says hello
	// v2 says hello
	// v2 says hello
	// 1 plugin, 2 fibers
}
