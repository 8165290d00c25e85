package runtime_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gordis-run/gordis/runtime"
)

// The registry lists every plugin with a fiber that is not disposed, in the
// order first applied, whatever state the fiber is in.
func TestRegistryListsEveryLiveFiber(t *testing.T) {
	root, _ := newRoot(t)
	ok := runtime.Func("ok", func(*runtime.Context) error { return nil })
	failing := runtime.Func("failing", func(*runtime.Context) error { return errors.New("broken") })
	waiting := runtime.Func("waiting", func(*runtime.Context) error { return nil }, runtime.Inject(FS))
	invalid := runtime.Configured("invalid", func(*runtime.Context, item9Config) error { return nil })
	names := func() []string {
		var out []string
		for _, p := range root.Plugins() {
			var states []string
			for _, f := range root.Fibers(p) {
				states = append(states, f.State().String())
			}
			out = append(out, fmt.Sprintf("%s %v", p.Name(), states))
		}
		return out
	}
	first := mustPlugin(t, root, ok, nil)
	mustPlugin(t, root, failing, nil)
	mustPlugin(t, root, waiting, nil)
	mustPlugin(t, root, invalid, map[string]any{"port": "not a number"})
	mustPlugin(t, root, ok, nil)
	equal(t, "registry", names(), []string{
		"ok [ACTIVE ACTIVE]", "failing [FAILED]", "waiting [PENDING]", "invalid [PENDING]",
	})
	if err := first.Dispose(); err != nil {
		t.Fatal(err)
	}
	equal(t, "after disposing one fiber of ok", names(), []string{
		"ok [ACTIVE]", "failing [FAILED]", "waiting [PENDING]", "invalid [PENDING]",
	})
	for _, p := range []runtime.Plugin{ok, failing} {
		if err := root.DisposePlugin(p); err != nil {
			t.Fatal(err)
		}
	}
	equal(t, "after DisposePlugin", names(), []string{"waiting [PENDING]", "invalid [PENDING]"})
	// Plugged again, a plugin goes to the end.
	mustPlugin(t, root, ok, nil)
	equal(t, "plugged again", names(), []string{"waiting [PENDING]", "invalid [PENDING]", "ok [ACTIVE]"})
	if err := root.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := root.Plugins(); len(got) != 0 {
		t.Fatalf("after Reset: %v", got)
	}
}

// What counts as one plugin: one Func value, one comparable value, or for a
// value that is not comparable its type, as Cordis counts one apply function.
func TestRegistryPluginIdentity(t *testing.T) {
	apply := func(*runtime.Context) error { return nil }
	shared := runtime.Func("shared", apply)
	var got []any
	cases := []struct {
		name  string
		a, b  runtime.Plugin
		entry int // registry entries after applying a and b
	}{
		{"one Func value twice", shared, shared, 1},
		{"two Func calls with one function", runtime.Func("x", apply), runtime.Func("x", apply), 2},
		{"equal comparable values", valuePlugin{&got}, valuePlugin{&got}, 1},
		{"different comparable values", valuePlugin{&got}, valuePlugin{new([]any)}, 2},
		{"values that are not comparable, one type", byName{}, byName{needs: []string{}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, _ := newRoot(t)
			mustPlugin(t, root, c.a, nil)
			mustPlugin(t, root, c.b, nil)
			if n := len(root.Plugins()); n != c.entry {
				t.Fatalf("%d entries, want %d", n, c.entry)
			}
			if n := len(root.Fibers(c.b)); n != 3-c.entry {
				t.Fatalf("b has %d fibers, want %d", n, 3-c.entry)
			}
			if err := root.DisposePlugin(c.b); err != nil {
				t.Fatal(err)
			}
			if n := len(root.Plugins()); n != c.entry-1 {
				t.Fatalf("%d entries after DisposePlugin(b), want %d", n, c.entry-1)
			}
		})
	}
	root, _ := newRoot(t)
	if fs := root.Fibers(nil); fs != nil {
		t.Fatalf("Fibers(nil): %v", fs)
	}
	if err := root.DisposePlugin(shared); err != nil {
		t.Fatalf("DisposePlugin of a plugin never applied: %v", err)
	}
}

// A hot reload as Cordis's HMR does it: dispose every fiber of the old
// plugin, then plug the new one at each old fiber's parent with its config.
// The new fibers land in the same isolation domain, under the same parent,
// and DisposePlugin returns the teardown errors.
func TestRegistryHotReload(t *testing.T) {
	root, _ := newRoot(t)
	ws := root.Isolate(FS.Name())
	mustPlugin(t, ws, provider("local", "workspace"), nil)
	var seen recorder
	version := func(v string) runtime.Plugin {
		return runtime.Configured("tool", func(ctx *runtime.Context, c greetConfig) error {
			d, err := FS.Get(ctx)
			if err != nil {
				return err
			}
			seen.add(fmt.Sprint(v, " ", c.Greeting, " ", d.label))
			if v != "v1" {
				return nil
			}
			_, err = ctx.Effect(func() (func() error, error) {
				return func() error { return errors.New("v1 teardown failed") }, nil
			})
			return err
		}, runtime.Inject(FS))
	}
	v1 := version("v1")
	host := mustPlugin(t, ws, runtime.Func("host", func(ctx *runtime.Context) error {
		_, err := ctx.Plugin(v1, map[string]any{"greeting": "hey"})
		return err
	}), nil)
	old := root.Fibers(v1)
	err := root.DisposePlugin(v1)
	if err == nil || err.Error() != "v1 teardown failed" {
		t.Fatalf("DisposePlugin: %v", err)
	}
	v2 := version("v2")
	for _, f := range old {
		if f.Parent() != host.Context() {
			t.Fatalf("Parent is not the host's context")
		}
		mustPlugin(t, f.Parent(), v2, f.Config())
	}
	equal(t, "applies", seen.list(), []string{"v1 hey workspace", "v2 hey workspace"})
	if root.Fiber().Parent() != nil {
		t.Fatal("the root fiber has a parent")
	}
}

// Plugging, disposing and reading the registry from many goroutines: the
// race detector checks the registry's lock, and at the end nothing is left.
func TestRegistryConcurrently(t *testing.T) {
	root, _ := newRoot(t)
	plugins := []runtime.Plugin{
		runtime.Func("a", func(*runtime.Context) error { return nil }),
		runtime.Func("b", func(ctx *runtime.Context) error {
			_, err := ctx.Plugin(runtime.Func("b-child", func(*runtime.Context) error { return nil }), nil)
			return err
		}),
		byName{},
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				p := plugins[(g+i)%len(plugins)]
				f, err := root.Plugin(p, nil)
				if err != nil {
					t.Error(err)
					return
				}
				switch i % 3 {
				case 0:
					_ = f.Dispose()
				case 1:
					_ = root.DisposePlugin(p)
				default:
					for _, q := range root.Plugins() {
						if fs := root.Fibers(q); slices.Contains(fs, nil) {
							t.Error("a nil fiber in the registry")
						}
					}
				}
			}
		})
	}
	wg.Wait()
	for _, p := range plugins {
		if err := root.DisposePlugin(p); err != nil {
			t.Fatal(err)
		}
	}
	if got := root.Plugins(); len(got) != 0 {
		var names []string
		for _, p := range got {
			names = append(names, fmt.Sprint(p.Name(), len(root.Fibers(p))))
		}
		t.Fatalf("left in the registry: %v", names)
	}
}
