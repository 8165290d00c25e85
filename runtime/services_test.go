package runtime_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/gordis-run/gordis/runtime"
)

// FS is the service handle the service tests share, as a provider package
// would declare it.
var FS = runtime.NewService[*disk]("fs")

type disk struct{ label string }

func provider(name, label string) runtime.Plugin {
	return runtime.Func(name, func(ctx *runtime.Context) error { return FS.Provide(ctx, &disk{label}) })
}

func TestItem14_InjectWaitsForProvider(t *testing.T) {
	for _, by := range []string{"plugin", "host"} {
		t.Run(by, func(t *testing.T) {
			root, _ := newRoot(t)
			var got string
			dep := mustPlugin(t, root, runtime.Func("tool", func(ctx *runtime.Context) error {
				d, err := FS.Get(ctx)
				if err != nil {
					return err
				}
				got = d.label
				return nil
			}, runtime.Inject(FS)), nil)
			if dep.State() != runtime.Pending || got != "" {
				t.Fatalf("without fs: %v, %q", dep.State(), got)
			}
			if by == "plugin" {
				mustPlugin(t, root, provider("local", "local"), nil)
			} else if err := FS.Provide(root, &disk{"host"}); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"plugin": "local", "host": "host"}[by]
			if dep.State() != runtime.Active || got != want || dep.Wait() != nil {
				t.Fatalf("with fs: %v, %q, %v", dep.State(), got, dep.Wait())
			}
		})
	}
}

func TestItem15_SeveralInjectsAnyOrder(t *testing.T) {
	// Foo injects qux; Bar injects foo and qux; Qux provides qux. Every
	// plugging order must apply each exactly once.
	orders := [][3]string{
		{"foo", "bar", "qux"}, {"foo", "qux", "bar"}, {"bar", "foo", "qux"},
		{"bar", "qux", "foo"}, {"qux", "foo", "bar"}, {"qux", "bar", "foo"},
	}
	foo, qux := runtime.NewService[string]("foo15"), runtime.NewService[string]("qux15")
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			root, _ := newRoot(t)
			var calls [3]atomic.Int32
			plugins := map[string]runtime.Plugin{
				"foo": runtime.Func("foo", func(ctx *runtime.Context) error {
					calls[0].Add(1)
					return foo.Provide(ctx, "foo")
				}, runtime.Inject(qux)),
				"bar": runtime.Func("bar", func(ctx *runtime.Context) error {
					calls[1].Add(1)
					_, err1 := foo.Get(ctx)
					_, err2 := qux.Get(ctx)
					return errors.Join(err1, err2)
				}, runtime.Inject(foo, qux)),
				"qux": runtime.Func("qux", func(ctx *runtime.Context) error {
					calls[2].Add(1)
					return qux.Provide(ctx, "qux")
				}),
			}
			var fibers []*runtime.Fiber
			for _, name := range order {
				fibers = append(fibers, mustPlugin(t, root, plugins[name], nil))
			}
			for i := range calls {
				if calls[i].Load() != 1 {
					t.Fatalf("apply counts %d %d %d", calls[0].Load(), calls[1].Load(), calls[2].Load())
				}
			}
			for _, f := range fibers {
				if f.State() != runtime.Active {
					t.Fatalf("%s is %v: %v", f.Name(), f.State(), f.Err())
				}
			}
		})
	}
}

func TestItem16_ProviderLossTearsDownDependents(t *testing.T) {
	root, _ := newRoot(t)
	rec := &recorder{}
	prov := mustPlugin(t, root, runtime.Func("local", func(ctx *runtime.Context) error {
		if err := FS.Provide(ctx, &disk{"local"}); err != nil {
			return err
		}
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { rec.add("provider teardown"); return nil }, nil
		})
		return err
	}), nil)
	dep := mustPlugin(t, root, runtime.Func("tool", func(ctx *runtime.Context) error {
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error {
				d, err := FS.Get(ctx) // still usable while tearing down
				if err != nil {
					rec.add("dependent teardown: " + err.Error())
					return err
				}
				rec.add("dependent teardown sees " + d.label)
				return nil
			}, nil
		})
		return err
	}, runtime.Inject(FS)), nil)
	if err := prov.Dispose(); err != nil {
		t.Fatal(err)
	}
	equal(t, "order", rec.list(), []string{"dependent teardown sees local", "provider teardown"})
	if dep.State() != runtime.Pending {
		t.Fatalf("dependent is %v, want PENDING", dep.State())
	}
	if _, err := FS.Get(dep.Context()); !errors.Is(err, runtime.ErrServiceUnavailable) ||
		err.Error() != `runtime: cannot get required service "fs" in inactive context` {
		t.Fatalf("Get while pending: %v", err)
	}
}

func TestItem17_NewProviderOrRestartReapplies(t *testing.T) {
	root, _ := newRoot(t)
	rec := &recorder{}
	mustPlugin(t, root, runtime.Func("tool", func(ctx *runtime.Context) error {
		d, err := FS.Get(ctx)
		if err != nil {
			return err
		}
		rec.add("apply " + d.label)
		_, err = ctx.Effect(func() (func() error, error) {
			return func() error { rec.add("dispose " + d.label); return nil }, nil
		})
		return err
	}, runtime.Inject(FS)), nil)
	a := mustPlugin(t, root, provider("a", "a"), nil)
	if err := a.Dispose(); err != nil {
		t.Fatal(err)
	}
	b := mustPlugin(t, root, provider("b", "b"), nil)
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	equal(t, "dependent", rec.list(), []string{"apply a", "dispose a", "apply b", "dispose b", "apply b"})

	// A provider updated with a new config: dispose, then apply with the new value.
	_ = b.Dispose()
	rec.reset()
	c := mustPlugin(t, root, runtime.Configured("c", func(ctx *runtime.Context, cfg greetConfig) error {
		return FS.Provide(ctx, &disk{cfg.Greeting})
	}), map[string]any{"greeting": "v1"})
	if err := c.Update(map[string]any{"greeting": "v2"}); err != nil {
		t.Fatal(err)
	}
	equal(t, "after update", rec.list(), []string{"apply v1", "dispose v1", "apply v2"})
}

func TestItem18_SetReplacesInPlace(t *testing.T) {
	root, _ := newRoot(t)
	var provCtx, depCtx *runtime.Context
	mustPlugin(t, root, runtime.Func("prov", func(ctx *runtime.Context) error {
		provCtx = ctx
		return FS.Provide(ctx, &disk{"v1"})
	}), nil)
	var applies int
	mustPlugin(t, root, runtime.Func("dep", func(ctx *runtime.Context) error {
		applies++
		depCtx = ctx
		return nil
	}, runtime.Inject(FS)), nil)
	if err := FS.Set(provCtx, &disk{"v2"}); err != nil {
		t.Fatal(err)
	}
	d, err := FS.Get(depCtx)
	if err != nil || d.label != "v2" || applies != 1 {
		t.Fatalf("after Set: %v %v, applies %d", d, err, applies)
	}
	if err := FS.Set(depCtx, &disk{"x"}); !errors.Is(err, runtime.ErrNotProvider) ||
		err.Error() != `runtime: cannot set service "fs": it is provided by plugin "prov", not "dep"` {
		t.Fatalf("Set by a dependent: %v", err)
	}
}

func TestItem19_DuplicateProviderFails(t *testing.T) {
	root, _ := newRoot(t)
	first := mustPlugin(t, root, provider("first", "1"), nil)
	second := mustPlugin(t, root, provider("second", "2"), nil)
	err := second.Wait()
	if !errors.Is(err, runtime.ErrServiceConflict) || second.State() != runtime.Failed ||
		err.Error() != `runtime: service "fs" is already provided by plugin "first"` {
		t.Fatalf("second provider: %v, %v", err, second.State())
	}
	if first.State() != runtime.Active {
		t.Fatalf("first provider is %v", first.State())
	}
	// The host cannot shadow it either.
	if err := FS.Provide(root, &disk{"host"}); !errors.Is(err, runtime.ErrServiceConflict) {
		t.Fatalf("host provide: %v", err)
	}
	// Once the first is gone, a restart of the second succeeds.
	_ = first.Dispose()
	if err := second.Restart(); err != nil || second.State() != runtime.Active {
		t.Fatalf("restart after the first left: %v, %v", err, second.State())
	}
}

func TestItem20_ServiceAccessRules(t *testing.T) {
	root, _ := newRoot(t)
	mustPlugin(t, root, provider("local", "local"), nil)
	var stranger *runtime.Context
	mustPlugin(t, root, runtime.Func("stranger", func(ctx *runtime.Context) error { stranger = ctx; return nil }), nil)
	if _, err := FS.Get(stranger); !errors.Is(err, runtime.ErrNotInjected) ||
		err.Error() != `runtime: cannot get service "fs" without inject` {
		t.Fatalf("Get without inject: %v", err)
	}
	if d, ok := FS.Lookup(stranger); !ok || d.label != "local" {
		t.Fatalf("Lookup: %v %v", d, ok)
	}
	missing := runtime.NewService[int]("missing")
	if v, ok := missing.Lookup(stranger); ok || v != 0 {
		t.Fatalf("Lookup of an absent service: %v %v", v, ok)
	}
	dep := mustPlugin(t, root, runtime.Func("dep", func(*runtime.Context) error { return nil }, runtime.Inject(FS)), nil)
	if _, err := FS.Get(dep.Context()); err != nil {
		t.Fatal(err)
	}
	_ = dep.Dispose()
	if _, err := FS.Get(dep.Context()); !errors.Is(err, runtime.ErrInactive) ||
		err.Error() != `runtime: cannot get service "fs": the context is disposed` {
		t.Fatalf("Get after dispose: %v", err)
	}
	if _, ok := FS.Lookup(dep.Context()); ok {
		t.Fatal("Lookup after dispose reported the service")
	}
	// A handle of the wrong type reports it.
	wrong := runtime.NewService[string]("fs")
	again := mustPlugin(t, root, runtime.Func("again", func(*runtime.Context) error { return nil }, runtime.Inject(FS)), nil)
	if _, err := wrong.Get(again.Context()); !errors.Is(err, runtime.ErrServiceType) ||
		err.Error() != `runtime: service "fs" holds *runtime_test.disk, not string` {
		t.Fatalf("wrong type: %v", err)
	}
}

func TestItem21_ServiceVisibility(t *testing.T) {
	root, _ := newRoot(t)
	cfg := runtime.NewService[string]("cfg21")
	var child, grandchild, sibling *runtime.Context
	mustPlugin(t, root, runtime.Func("parent", func(ctx *runtime.Context) error {
		if err := cfg.Provide(ctx, "parent's"); err != nil {
			return err
		}
		v, err := cfg.Get(ctx) // its own service
		if err != nil || v != "parent's" {
			return fmt.Errorf("own service: %q %v", v, err)
		}
		_, err = ctx.Plugin(runtime.Func("child", func(ctx *runtime.Context) error {
			child = ctx
			_, err := ctx.Plugin(runtime.Func("grandchild", func(ctx *runtime.Context) error {
				grandchild = ctx
				return nil
			}), nil)
			return err
		}), nil)
		return err
	}), nil)
	mustPlugin(t, root, runtime.Func("sibling", func(ctx *runtime.Context) error { sibling = ctx; return nil }), nil)
	for name, ctx := range map[string]*runtime.Context{"child": child, "grandchild": grandchild} {
		if v, err := cfg.Get(ctx); err != nil || v != "parent's" {
			t.Errorf("%s: %q %v", name, v, err)
		}
	}
	if _, err := cfg.Get(sibling); !errors.Is(err, runtime.ErrNotInjected) {
		t.Errorf("sibling reached a service it did not inject: %v", err)
	}
	global := runtime.NewService[int]("global21")
	if err := global.Provide(root, 42); err != nil {
		t.Fatal(err)
	}
	for name, ctx := range map[string]*runtime.Context{"root": root, "sibling": sibling, "grandchild": grandchild} {
		if v, err := global.Get(ctx); err != nil || v != 42 {
			t.Errorf("root service from %s: %v %v", name, v, err)
		}
	}
}

// byName is a plugin value whose injects a host read from its configuration.
type byName struct{ needs []string }

var _ runtime.Injector = byName{}

func (byName) Name() string                            { return "by-name" }
func (byName) Apply(ctx *runtime.Context, _ any) error { return nil }

func (p byName) Inject() []runtime.ServiceRef {
	refs := make([]runtime.ServiceRef, len(p.needs))
	for i, name := range p.needs {
		refs[i] = runtime.Named(name)
	}
	return refs
}

func TestInjectByName(t *testing.T) {
	root, _ := newRoot(t)
	// The same service, once by handle and once by a name known at run time.
	byHandle := mustPlugin(t, root, runtime.Func("by-handle", func(*runtime.Context) error { return nil },
		runtime.Inject(FS)), nil)
	named := mustPlugin(t, root, byName{needs: []string{FS.Name()}}, nil)
	optioned := mustPlugin(t, root, runtime.Func("by-option", func(*runtime.Context) error { return nil },
		runtime.Inject(runtime.Named("fs"))), nil)
	for _, f := range []*runtime.Fiber{byHandle, named, optioned} {
		if f.State() != runtime.Pending {
			t.Fatalf("%s without fs: %v", f.Name(), f.State())
		}
	}
	mustPlugin(t, root, provider("local", "local"), nil)
	for _, f := range []*runtime.Fiber{byHandle, named, optioned} {
		if f.State() != runtime.Active {
			t.Errorf("%s with fs: %v", f.Name(), f.State())
		}
	}
}
