package runtime_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/gordis-run/gordis/runtime"
)

// The scenarios in this file come from Cordis's own test suite, where
// gordis used to behave differently.

// A dependent whose service goes away while its apply runs is never
// reported ACTIVE: it goes LOADING, UNLOADING, PENDING, with everything the
// apply registered torn down, and applies again when a provider returns.
func TestServiceLostDuringApply(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("lost-during-apply")
	prov := mustPlugin(t, root, provider("local", "first"), nil)
	log := statusLog(t, root, "dep")
	var hits int
	dep := mustPlugin(t, root, runtime.Func("dep", func(ctx *runtime.Context) error {
		if _, err := ev.On(ctx, func(int) error { hits++; return nil }); err != nil {
			return err
		}
		if prov != nil {
			return prov.Dispose() // the provider leaves while dep is LOADING
		}
		return nil
	}, runtime.Inject(FS)), nil)
	equal(t, "statuses", log.list(), []string{"LOADING", "UNLOADING", "PENDING"})
	if err := dep.Wait(); err != nil || dep.State() != runtime.Pending {
		t.Fatalf("dep: %v, %v", dep.State(), err)
	}
	if err := ev.Emit(root, 1); err != nil || hits != 0 {
		t.Fatalf("the unloaded application's listener ran %d times", hits)
	}
	log.reset()
	prov = nil
	mustPlugin(t, root, provider("local", "second"), nil)
	equal(t, "statuses after a new provider", log.list(), []string{"LOADING", "ACTIVE"})
	if d, err := FS.Get(dep.Context()); err != nil || d.label != "second" {
		t.Fatalf("Get: %v, %v", d, err)
	}
}

// A provider that restarts while a dependent applies hands the dependent a
// new record: the application against the old one does not stand, and the
// dependent applies again against the new one.
func TestProviderRestartDuringApply(t *testing.T) {
	root, _ := newRoot(t)
	var n int
	prov := mustPlugin(t, root, runtime.Func("local", func(ctx *runtime.Context) error {
		n++
		return FS.Provide(ctx, &disk{fmt.Sprint("generation ", n)})
	}), nil)
	log := statusLog(t, root, "dep")
	var applies []string
	dep := mustPlugin(t, root, runtime.Func("dep", func(ctx *runtime.Context) error {
		d, err := FS.Get(ctx)
		if err != nil {
			return err
		}
		applies = append(applies, d.label)
		if len(applies) == 1 {
			return prov.Restart()
		}
		return nil
	}, runtime.Inject(FS)), nil)
	equal(t, "statuses", log.list(), []string{"LOADING", "UNLOADING", "PENDING", "LOADING", "ACTIVE"})
	equal(t, "applies", applies, []string{"generation 1", "generation 2"})
	if dep.State() != runtime.Active {
		t.Fatalf("dep: %v", dep.State())
	}
}

// reader is a consumer of FS that reports the label it sees on every apply.
func reader(name string, seen *recorder) runtime.Plugin {
	return runtime.Func(name, func(ctx *runtime.Context) error {
		d, err := FS.Get(ctx)
		if err != nil {
			return err
		}
		seen.add(name + " sees " + d.label)
		return nil
	}, runtime.Inject(FS))
}

// Two workspaces under one root, as with Cordis's isolate: each isolated
// context has its own "fs" provider and consumer, the root keeps the shared
// one, and a provider change reaches only the consumers of its domain.
func TestIsolateTwoProvidersOneRoot(t *testing.T) {
	root, _ := newRoot(t)
	wsA, wsB := root.Isolate(FS.Name()), root.Isolate(FS.Name())
	var seen recorder
	mustPlugin(t, root, provider("shared", "shared"), nil)
	provA := mustPlugin(t, wsA, provider("local-a", "a"), nil)
	mustPlugin(t, wsB, provider("local-b", "b"), nil)
	readers := map[string]*runtime.Fiber{
		"root reader": mustPlugin(t, root, reader("root reader", &seen), nil),
		"a reader":    mustPlugin(t, wsA, reader("a reader", &seen), nil),
		"b reader":    mustPlugin(t, wsB, reader("b reader", &seen), nil),
	}
	equal(t, "applies", seen.list(), []string{"root reader sees shared", "a reader sees a", "b reader sees b"})
	if d, ok := FS.Lookup(root); !ok || d.label != "shared" {
		t.Fatalf("root Lookup: %v, %v", d, ok)
	}
	if d, ok := FS.Lookup(wsA); !ok || d.label != "a" {
		t.Fatalf("workspace Lookup: %v, %v", d, ok)
	}

	// A second provider in one domain still conflicts.
	dup := mustPlugin(t, wsA, provider("local-a2", "a2"), nil)
	if err := dup.Wait(); !errors.Is(err, runtime.ErrServiceConflict) {
		t.Fatalf("second provider in one domain: %v", err)
	}

	// Only workspace A's reader loses its service.
	seen.reset()
	if err := provA.Dispose(); err != nil {
		t.Fatal(err)
	}
	for name, f := range readers {
		want := runtime.Active
		if name == "a reader" {
			want = runtime.Pending
		}
		if f.State() != want {
			t.Errorf("%s: %v, want %v", name, f.State(), want)
		}
	}
	mustPlugin(t, wsA, provider("local-a3", "a3"), nil)
	equal(t, "applies after workspace A's provider changed", seen.list(), []string{"a reader sees a3"})
}

// A service that is not isolated stays shared, a plugin's children inherit
// its domain, isolating one name leaves the others alone, and an isolated
// service provided on the isolated context
// itself is not visible from the root.
func TestIsolateScope(t *testing.T) {
	root, _ := newRoot(t)
	count := runtime.NewService[int]("isolate-count")
	if err := count.Provide(root, 7); err != nil {
		t.Fatal(err)
	}
	ws := root.Isolate(FS.Name())
	if err := FS.Provide(ws, &disk{"host's workspace"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := FS.Lookup(root); ok {
		t.Fatal("the root sees a service isolated below it")
	}
	var got []string
	// Isolating another name in between changes nothing for fs.
	mustPlugin(t, ws.Isolate("unrelated"), runtime.Func("parent", func(ctx *runtime.Context) error {
		_, err := ctx.Plugin(runtime.Func("child", func(ctx *runtime.Context) error {
			d, err := FS.Get(ctx)
			if err != nil {
				return err
			}
			n, err := count.Get(ctx)
			got = append(got, fmt.Sprint(d.label, " ", n))
			return err
		}, runtime.Inject(FS, count)), nil)
		return err
	}), nil)
	equal(t, "child", got, []string{"host's workspace 7"})
	// Without a provider in its own domain, a plugin plugged on the root
	// waits even though the workspace has one.
	outside := mustPlugin(t, root, runtime.Func("outside", func(*runtime.Context) error { return nil },
		runtime.Inject(FS)), nil)
	if outside.State() != runtime.Pending {
		t.Fatalf("outside: %v", outside.State())
	}
	if _, err := FS.Get(root); !errors.Is(err, runtime.ErrNotInjected) {
		t.Fatalf("root Get: %v", err)
	}
}

// Filters reach the same listeners in every dispatch mode: those whose
// context the filter accepts, plus the global ones (Cordis's `this` filter
// applies to emit, parallel, serial and bail alike, and to waterfalls here).
func TestFilterInEveryMode(t *testing.T) {
	for _, mode := range []string{"emit", "parallel", "serial", "bail", "waterfall"} {
		t.Run(mode, func(t *testing.T) {
			root, _ := newRoot(t)
			ev := runtime.NewEvent[int]("filter-mode/event/" + mode)
			hook := runtime.NewHook[int, string]("filter-mode/hook/" + mode)
			chain := runtime.NewWaterfall[int, string]("filter-mode/waterfall/" + mode)
			rec := &recorder{}
			on := func(ctx *runtime.Context, name string, opts ...runtime.ListenOption) {
				var err error
				switch mode {
				case "emit", "parallel":
					_, err = ev.On(ctx, func(int) error { rec.add(name); return nil }, opts...)
				case "serial", "bail":
					_, err = hook.On(ctx, func(int) (string, error) { rec.add(name); return "", nil }, opts...)
				case "waterfall":
					_, err = chain.On(ctx, func(_ int, next runtime.Next[string]) (string, error) {
						rec.add(name)
						return next()
					}, opts...)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			on(root.Extend(sessionKey{}, "s1"), "s1")
			on(root.Extend(sessionKey{}, "s2"), "s2")
			on(root.Extend(sessionKey{}, "s2"), "s2 global", runtime.Global())
			on(root, "unrestricted")
			dispatch := func(filter runtime.Filter) {
				var err error
				switch {
				case mode == "emit" && filter != nil:
					err = ev.EmitTo(root, filter, 0)
				case mode == "emit":
					err = ev.Emit(root, 0)
				case mode == "parallel" && filter != nil:
					err = ev.ParallelTo(root, filter, 0)
				case mode == "parallel":
					err = ev.Parallel(root, 0)
				case mode == "serial" && filter != nil:
					_, err = hook.SerialTo(root, t.Context(), filter, 0)
				case mode == "serial":
					_, err = hook.Serial(root, t.Context(), 0)
				case mode == "bail" && filter != nil:
					_, err = hook.BailTo(root, filter, 0)
				case mode == "bail":
					_, err = hook.Bail(root, 0)
				case mode == "waterfall" && filter != nil:
					_, err = chain.RunTo(root, filter, 0, func() (string, error) { rec.add("fallback"); return "", nil })
				default:
					_, err = chain.Run(root, 0, func() (string, error) { rec.add("fallback"); return "", nil })
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			want := func(names ...string) []string {
				if mode == "waterfall" {
					names = append(names, "fallback")
				}
				return names
			}
			sorted := func(got []string) []string {
				if mode == "parallel" {
					slices.Sort(got)
				}
				return got
			}
			dispatch(sessionFilter("s1"))
			equal(t, "filtered", sorted(rec.list()), want("s1", "s2 global", "unrestricted"))
			rec.reset()
			dispatch(nil)
			equal(t, "unfiltered", sorted(rec.list()), want("s1", "s2", "s2 global", "unrestricted"))
		})
	}
}

// panicFilter panics when asked about a listener of the "bad" session.
type panicFilter struct{}

func (panicFilter) Accept(c *runtime.Context) bool {
	if c.Value(sessionKey{}) == "bad" {
		panic("filter broke")
	}
	return true
}

// A filter that panics is blamed on the listener it was asked about: the
// dispatch reports a *PanicError and the emitter does not panic.
func TestPanickingFilterIsIsolated(t *testing.T) {
	root, sink := newRoot(t)
	hook := runtime.NewHook[int, string]("filter-panic/hook")
	chain := runtime.NewWaterfall[int, string]("filter-panic/waterfall")
	ev := runtime.NewEvent[int]("filter-panic/event")
	bad := root.Extend(sessionKey{}, "bad")
	if _, err := hook.On(bad, func(int) (string, error) { return "unreachable", nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := chain.On(bad, func(int, runtime.Next[string]) (string, error) { return "unreachable", nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.On(bad, func(int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	_, bailErr := hook.BailTo(root, panicFilter{}, 0)
	_, runErr := chain.RunTo(root, panicFilter{}, 0, nil)
	parErr := ev.ParallelTo(root, panicFilter{}, 0)
	for name, err := range map[string]error{"bail": bailErr, "waterfall": runErr, "parallel": parErr} {
		var pe *runtime.PanicError
		if !errors.As(err, &pe) || pe.Value != "filter broke" {
			t.Errorf("%s: %v", name, err)
		}
	}
	var failed int
	for _, r := range sink.Records() {
		if r.Message == "listener failed" && r.Attrs["error"] == "panic: filter broke" {
			failed++
		}
	}
	if failed != 3 {
		t.Fatalf("%d listener failures logged, want 3", failed)
	}
}

// Resetting the root disposes everything registered on it, like Cordis's
// root.fiber.dispose(), and the root stays usable; Close stays final.
func TestResetLeavesRootUsable(t *testing.T) {
	root, sink := newRoot(t)
	ev := runtime.NewEvent[int]("reset")
	count := runtime.NewService[int]("reset-count")
	var order recorder
	if err := count.Provide(root, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.On(root, func(int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Effect(func() (func() error, error) {
		return func() error { order.add("root effect"); return nil }, nil
	}); err != nil {
		t.Fatal(err)
	}
	prov := mustPlugin(t, root, provider("local", "local"), nil)
	dep := mustPlugin(t, root, runtime.Func("dep", func(ctx *runtime.Context) error {
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { order.add("dep"); return nil }, nil
		})
		return err
	}, runtime.Inject(FS, count)), nil)
	waiting := mustPlugin(t, root, needs("tool"), nil)
	failing := mustPlugin(t, root, runtime.Func("failing", func(*runtime.Context) error {
		_, err := root.Effect(func() (func() error, error) {
			return func() error { return errors.New("teardown broke") }, nil
		})
		return err
	}), nil)

	if err := root.Reset(); err == nil || err.Error() != "teardown broke" {
		t.Fatalf("Reset: %v", err)
	}
	equal(t, "teardowns", order.list(), []string{"dep", "root effect"})
	for _, f := range []*runtime.Fiber{prov, dep, waiting, failing} {
		if f.State() != runtime.Disposed {
			t.Errorf("%s after Reset: %v", f.Name(), f.State())
		}
	}
	if n := root.ListenerCount(ev.Name()); n != 0 {
		t.Errorf("%d listeners left", n)
	}
	if _, ok := count.Lookup(root); ok {
		t.Error("the root's service survived Reset")
	}
	var warned []string
	for _, r := range sink.Records() {
		if r.Message == "plugin still pending" {
			warned = append(warned, r.Attrs["plugin"]+" "+r.Attrs["missing"])
		}
	}
	equal(t, "pending warnings", warned, []string{"reader [tool]"})

	// Usable again: the same service and plugins, no conflict.
	if err := count.Provide(root, 2); err != nil {
		t.Fatal(err)
	}
	mustPlugin(t, root, provider("local", "again"), nil)
	again := mustPlugin(t, root, runtime.Func("dep", func(*runtime.Context) error { return nil }, runtime.Inject(FS, count)), nil)
	if again.State() != runtime.Active {
		t.Fatalf("after Reset: %v", again.State())
	}

	// Close is final.
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}
	if err := root.Reset(); !errors.Is(err, runtime.ErrInactive) {
		t.Fatalf("Reset after Close: %v", err)
	}
	if _, err := root.Plugin(provider("late", "late"), nil); !errors.Is(err, runtime.ErrInactive) {
		t.Fatalf("Plugin after Close: %v", err)
	}
	if err := again.Context().Reset(); err == nil {
		t.Fatal("Reset on a plugin context succeeded")
	}
}

// nested returns a plugin that listens to ev and plugs a child that does
// the same and plugs a grandchild: three plugins, three listeners (Cordis's
// "nested plugins").
func nested(ev runtime.Event[int]) runtime.Plugin {
	listen := func(ctx *runtime.Context) error {
		_, err := ev.On(ctx, func(int) error { return nil })
		return err
	}
	grandchild := runtime.Func("grandchild", listen)
	child := runtime.Func("child", func(ctx *runtime.Context) error {
		if err := listen(ctx); err != nil {
			return err
		}
		_, err := ctx.Plugin(grandchild, nil)
		return err
	})
	return runtime.Func("parent", func(ctx *runtime.Context) error {
		if err := listen(ctx); err != nil {
			return err
		}
		_, err := ctx.Plugin(child, nil)
		return err
	})
}

// Cordis's "nested plugins" and "compare snapshot": the registry holds one
// entry per applied plugin, disposing the outer fiber empties it, and
// deleting a plugin from the registry takes the listeners back to where
// they were; plugging it again restores them.
func TestRegistryNestedAndSnapshot(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("registry/nested")
	if _, err := ev.On(root, func(int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	p := nested(ev)
	f := mustPlugin(t, root, p, nil)
	if n := len(root.Plugins()); n != 3 {
		t.Fatalf("registry size %d, want 3", n)
	}
	if n := root.ListenerCount(ev.Name()); n != 4 {
		t.Fatalf("%d listeners, want 4", n)
	}
	for range 2 { // the second dispose is a no-op
		if err := f.Dispose(); err != nil {
			t.Fatal(err)
		}
		if n := len(root.Plugins()); n != 0 {
			t.Fatalf("registry size %d after dispose, want 0", n)
		}
		if n := root.ListenerCount(ev.Name()); n != 1 {
			t.Fatalf("%d listeners after dispose, want 1", n)
		}
	}

	before := root.ListenerCount(ev.Name())
	mustPlugin(t, root, p, nil)
	after := root.ListenerCount(ev.Name())
	if err := root.DisposePlugin(p); err != nil {
		t.Fatal(err)
	}
	if n := root.ListenerCount(ev.Name()); n != before {
		t.Fatalf("%d listeners after DisposePlugin, want %d", n, before)
	}
	mustPlugin(t, root, p, nil)
	if n := root.ListenerCount(ev.Name()); n != after {
		t.Fatalf("%d listeners after plugging again, want %d", n, after)
	}
}

// Cordis's registry.delete(child): every fiber of the child plugin goes,
// under every parent, and the parents stay ACTIVE. A service that plugs a
// dependent of itself (Cordis's service "compare snapshot") leaves nothing
// behind either, and comes back whole.
func TestRegistryDeleteEverywhere(t *testing.T) {
	root, _ := newRoot(t)
	var disposed recorder
	child := runtime.Func("child", func(ctx *runtime.Context) error {
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { disposed.add(ctx.Fiber().Parent().Fiber().Name()); return nil }, nil
		})
		return err
	})
	parent := func(name string) runtime.Plugin {
		return runtime.Func(name, func(ctx *runtime.Context) error {
			_, err := ctx.Plugin(child, nil)
			return err
		})
	}
	a, b := mustPlugin(t, root, parent("a"), nil), mustPlugin(t, root, parent("b"), nil)
	if n := len(root.Fibers(child)); n != 2 {
		t.Fatalf("child has %d fibers, want 2", n)
	}
	if err := root.DisposePlugin(child); err != nil {
		t.Fatal(err)
	}
	equal(t, "disposed, newest first", disposed.list(), []string{"b", "a"})
	if a.State() != runtime.Active || b.State() != runtime.Active {
		t.Fatalf("parents: %v, %v", a.State(), b.State())
	}
	if fs := root.Fibers(child); fs != nil {
		t.Fatalf("child fibers left: %v", fs)
	}

	test := runtime.NewService[string]("registry/test")
	svc := runtime.Func("Test", func(ctx *runtime.Context) error {
		if err := test.Provide(ctx, "test"); err != nil {
			return err
		}
		_, err := ctx.Plugin(runtime.Func("", func(*runtime.Context) error { return nil }, runtime.Inject(test)), nil)
		return err
	})
	snapshot := func() string {
		_, ok := test.Lookup(root)
		return fmt.Sprint(len(root.Plugins()), " plugins, service ", ok)
	}
	before := snapshot()
	f := mustPlugin(t, root, svc, nil)
	after := snapshot()
	for _, p := range root.Plugins() {
		for _, f := range root.Fibers(p) {
			if f.State() != runtime.Active {
				t.Fatalf("%s is %v", f.Name(), f.State())
			}
		}
	}
	if err := root.DisposePlugin(svc); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(); got != before || f.State() != runtime.Disposed {
		t.Fatalf("after DisposePlugin: %s (%v), want %s", got, f.State(), before)
	}
	mustPlugin(t, root, svc, nil)
	if got := snapshot(); got != after {
		t.Fatalf("plugged again: %s, want %s", got, after)
	}
}

// label is a type of the tests' own for Isolate labels.
type label string

// Cordis's "shared label": two contexts isolated for foo with one label
// share its domain. A provider in one serves the dependents of both, the
// root's provider serves only the root's, and its departure tears down both
// and no one else.
func TestIsolateSharedLabel(t *testing.T) {
	root, _ := newRoot(t)
	foo := runtime.NewService[int]("isolate/foo")
	var applies, disposes int
	p := runtime.Func("dep", func(ctx *runtime.Context) error {
		applies++
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { disposes++; return nil }, nil
		})
		return err
	}, runtime.Inject(foo))
	mustPlugin(t, root, p, nil)
	ctx1 := root.Isolate(foo.Name(), label("test"))
	mustPlugin(t, ctx1, p, nil)
	ctx2 := root.Isolate(foo.Name(), label("test"))
	mustPlugin(t, ctx2, p, nil)
	counts := func(want string) {
		t.Helper()
		var seen []string
		for _, ctx := range []*runtime.Context{root, ctx1, ctx2} {
			if v, ok := foo.Lookup(ctx); ok {
				seen = append(seen, fmt.Sprint(v))
			} else {
				seen = append(seen, "-")
			}
		}
		if got := fmt.Sprint(seen, " applies ", applies, " disposes ", disposes); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	counts("[- - -] applies 0 disposes 0")

	if err := foo.Provide(root, 100); err != nil {
		t.Fatal(err)
	}
	counts("[100 - -] applies 1 disposes 0")

	shared := mustPlugin(t, ctx1, runtime.Func("provider", func(ctx *runtime.Context) error {
		return foo.Provide(ctx, 200)
	}), nil)
	counts("[100 200 200] applies 3 disposes 0")

	if err := shared.Dispose(); err != nil {
		t.Fatal(err)
	}
	counts("[100 - -] applies 3 disposes 2")
}

// Cordis's "isolated event": a service in an isolated domain emits scoped
// to its domain; a listener there hears it, one on the root does not.
func TestIsolatedEvent(t *testing.T) {
	root, _ := newRoot(t)
	foo := runtime.NewService[string]("isolated-event/foo")
	ev := runtime.NewEvent[string]("isolated-event")
	ctx := root.Isolate(foo.Name())
	var outer, inner recorder
	if _, err := ev.On(root, func(s string) error { outer.add(s); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.On(ctx, func(s string) error { inner.add(s); return nil }); err != nil {
		t.Fatal(err)
	}
	mustPlugin(t, ctx, runtime.Func("Foo", func(ctx *runtime.Context) error {
		if err := foo.Provide(ctx, "foo"); err != nil {
			return err
		}
		return ev.EmitTo(ctx, foo.Domain(ctx), "from foo")
	}), nil)
	equal(t, "outer", outer.list(), nil)
	equal(t, "inner", inner.list(), []string{"from foo"})
}

// fooService is Cordis's functional service: invoking it returns its config
// with the caller's Intercept layers merged in, and extending it makes a
// derived instance with more config.
type fooService struct{ config map[string]int }

var foo = runtime.NewService[*fooService]("foo")

func (f *fooService) invoke(caller *runtime.Context) string {
	cfg, err := runtime.ResolveConfig(caller, foo.Name(), f.config)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(cfg)
}

func (f *fooService) extend(more map[string]int) *fooService {
	cfg := maps.Clone(f.config)
	maps.Copy(cfg, more)
	return &fooService{cfg}
}

// Cordis's "functional service": a call from an intercepted context sees the
// layer, a call from the root does not, and an extension keeps both its own
// config and the caller's layers.
func TestInterceptFunctionalService(t *testing.T) {
	root, _ := newRoot(t)
	mustPlugin(t, root, runtime.Configured("Foo", func(ctx *runtime.Context, c map[string]int) error {
		return foo.Provide(ctx, &fooService{c})
	}), map[string]int{"a": 1})
	f, ok := foo.Lookup(root)
	if !ok {
		t.Fatal("foo is not provided")
	}
	ctx1 := root.Intercept(foo.Name(), map[string]int{"b": 2})
	foo1, ok := foo.Lookup(ctx1)
	if !ok || foo1 != f {
		t.Fatal("the intercepted context gets another service")
	}
	foo2, foo3 := f.extend(map[string]int{"c": 3}), foo1.extend(map[string]int{"d": 4})
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"from the root", f.invoke(root), "map[a:1]"},
		{"from the intercepted context", f.invoke(ctx1), "map[a:1 b:2]"},
		{"an extension from the root", foo2.invoke(root), "map[a:1 c:3]"},
		{"an extension from the intercepted context", foo3.invoke(ctx1), "map[a:1 b:2 d:4]"},
		{"the first service after extending", foo1.invoke(ctx1), "map[a:1 b:2]"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.got, c.want)
		}
	}
}

// Cordis's "honours intercept name": an Intercept of the logger names what
// is logged through that context, and through the plugins plugged under it;
// the root and its other plugins keep their names.
func TestInterceptLoggerName(t *testing.T) {
	root, logs := newRoot(t)
	intercepted := root.Intercept(runtime.Log, runtime.LogConfig{Name: "intercepted"})
	intercepted.Logger().Info("hello")
	under := mustPlugin(t, intercepted, runtime.Func("under", func(*runtime.Context) error { return nil }), nil)
	under.Context().Logger().Info("from a plugin under it")
	renamed := mustPlugin(t, intercepted.Intercept(runtime.Log, map[string]any{"name": "nearest"}),
		runtime.Func("renamed", func(*runtime.Context) error { return nil }), nil)
	renamed.Context().Logger().Info("from a plugin under two")
	root.Logger().Info("from the root")
	mustPlugin(t, root, runtime.Func("outside", func(ctx *runtime.Context) error {
		ctx.Logger().Info("from outside")
		return nil
	}), nil)
	var got []string
	for _, r := range logs.Records() {
		got = append(got, r.Attrs["plugin"]+": "+r.Message)
	}
	equal(t, "names", got, []string{
		"intercepted: hello",
		"intercepted: from a plugin under it",
		"nearest: from a plugin under two",
		"root: from the root",
		"outside: from outside",
	})
}
