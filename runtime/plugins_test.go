package runtime_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/internal/schema"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
	"log/slog"
)

type greetConfig struct {
	Greeting string `json:"greeting,omitempty" jsonschema:"default=hello"`
	Times    int    `json:"times,omitempty" jsonschema:"minimum=1,default=1"`
}

// valuePlugin is a plugin written as a value with Apply, plus the optional
// Configurable capability.
type valuePlugin struct{ got *[]any }

func (valuePlugin) Name() string         { return "value" }
func (valuePlugin) ConfigPrototype() any { return greetConfig{} }
func (p valuePlugin) Apply(ctx *runtime.Context, config any) error {
	*p.got = append(*p.got, config)
	return nil
}

var (
	_ runtime.Plugin       = valuePlugin{}
	_ runtime.Configurable = valuePlugin{}
)

type greeter struct {
	cfg    greetConfig
	closed *atomic.Int32
}

func (g *greeter) Close() error { g.closed.Add(1); return nil }

func TestItem01_PluginForms(t *testing.T) {
	root, _ := newRoot(t)
	want := greetConfig{Greeting: "hey", Times: 1} // Times filled from its default
	var got []any
	var closed atomic.Int32
	forms := []struct {
		name string
		p    runtime.Plugin
	}{
		{"function", runtime.Configured("fn", func(ctx *runtime.Context, c greetConfig) error {
			got = append(got, c)
			return nil
		})},
		{"value", valuePlugin{&got}},
		{"constructor", runtime.Constructor("ctor", func(ctx *runtime.Context, c greetConfig) (*greeter, error) {
			got = append(got, c)
			return &greeter{cfg: c, closed: &closed}, nil
		})},
	}
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			got = nil
			f := runtimetest.Plug(t, root, form.p, map[string]any{"greeting": "hey"})
			if len(got) != 1 || got[0] != any(want) {
				t.Fatalf("apply got %#v, want one call with %#v", got, want)
			}
			if f.Context().Fiber() != f || f.Config() != any(want) {
				t.Fatalf("fiber context/config mismatch: %#v", f.Config())
			}
			if err := f.Dispose(); err != nil {
				t.Fatal(err)
			}
		})
	}
	if closed.Load() != 1 {
		t.Fatalf("constructor value closed %d times, want 1", closed.Load())
	}
	// A plain function plugin receives the context; Func has no config.
	var seen *runtime.Context
	f := mustPlugin(t, root, runtime.Func("plain", func(ctx *runtime.Context) error { seen = ctx; return nil }), nil)
	if seen != f.Context() {
		t.Fatal("Func apply did not receive the fiber's context")
	}
}

type nilApply struct{}

func (*nilApply) Name() string                      { return "nil" }
func (*nilApply) Apply(*runtime.Context, any) error { return nil }

func TestItem02_InvalidPluginRefused(t *testing.T) {
	root, _ := newRoot(t)
	cases := []struct {
		name string
		p    runtime.Plugin
		msg  string
	}{
		{"nil", nil, "runtime: invalid plugin: nil plugin"},
		{"typed nil", (*nilApply)(nil), "runtime: invalid plugin: nil plugin"},
		{"Func without apply", runtime.Func("f", nil), `runtime: invalid plugin: plugin "f" has no apply function`},
		{"Configured without apply", runtime.Configured[greetConfig]("c", nil), `runtime: invalid plugin: plugin "c" has no apply function`},
		{"Constructor without constructor", runtime.Constructor[greetConfig, *greeter]("k", nil), `runtime: invalid plugin: plugin "k" has no apply function`},
		{"nil inject", runtime.Func("n", func(*runtime.Context) error { return nil }, runtime.Inject(nil)),
			`runtime: invalid plugin: plugin "n" injects a service without a name`},
		{"empty name", runtime.Func("e", func(*runtime.Context) error { return nil }, runtime.Inject(FS, runtime.Named(""))),
			`runtime: invalid plugin: plugin "e" injects a service without a name`},
		{"zero handle", runtime.Func("z", func(*runtime.Context) error { return nil }, runtime.Inject(runtime.Service[int]{})),
			`runtime: invalid plugin: plugin "z" injects a service without a name`},
		{"Injector with an empty name", byName{needs: []string{""}}, `runtime: invalid plugin: plugin "by-name" injects a service without a name`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := root.Plugin(c.p, nil)
			if f != nil || !errors.Is(err, runtime.ErrInvalidPlugin) || err.Error() != c.msg {
				t.Fatalf("got %v, %v; want nil, %q", f, err, c.msg)
			}
		})
	}
}

func TestItem03_ApplyTimingAndExactlyOnce(t *testing.T) {
	root, _ := newRoot(t)
	svc := runtime.NewService[int]("item3")
	var applied atomic.Int32
	ready := mustPlugin(t, root, runtime.Func("ready", func(*runtime.Context) error { applied.Add(1); return nil }), nil)
	if applied.Load() != 1 || ready.State() != runtime.Active {
		t.Fatalf("apply did not run before Plugin returned: %d, %v", applied.Load(), ready.State())
	}

	var waiting atomic.Int32
	dep := mustPlugin(t, root, runtime.Func("dep", func(*runtime.Context) error { waiting.Add(1); return nil }, runtime.Inject(svc)), nil)
	if dep.State() != runtime.Pending || waiting.Load() != 0 {
		t.Fatalf("fiber with a missing service: %v, applied %d", dep.State(), waiting.Load())
	}
	// The service appears on another goroutine: apply runs there, once.
	done := make(chan error)
	go func() { done <- svc.Provide(root, 3) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if dep.State() != runtime.Active || waiting.Load() != 1 {
		t.Fatalf("after provide: %v, applied %d", dep.State(), waiting.Load())
	}
	if err := svc.Set(root, 4); err != nil { // no re-apply on Set
		t.Fatal(err)
	}
	if waiting.Load() != 1 {
		t.Fatalf("applied %d times, want 1", waiting.Load())
	}
}

func TestItem04_FiberNames(t *testing.T) {
	root, sink := newRoot(t)
	var inner *runtime.Fiber
	outer := mustPlugin(t, root, runtime.Func("outer", func(ctx *runtime.Context) error {
		var err error
		inner, err = ctx.Plugin(runtime.Func("", func(ctx *runtime.Context) error {
			ctx.Logger().Info("hi")
			return nil
		}), nil)
		return err
	}), nil)
	anon := mustPlugin(t, root, runtime.Func("", func(*runtime.Context) error { return nil }), nil)
	for _, c := range []struct {
		f    *runtime.Fiber
		want string
	}{{root.Fiber(), "root"}, {outer, "outer"}, {inner, "outer"}, {anon, "root"}} {
		if c.f.Name() != c.want {
			t.Errorf("name %q, want %q", c.f.Name(), c.want)
		}
	}
	if outer.ID() == inner.ID() || root.Fiber().ID() != 0 {
		t.Errorf("ids: root %d outer %d inner %d", root.Fiber().ID(), outer.ID(), inner.ID())
	}
	recs := sink.Records()
	if len(recs) != 1 || recs[0].Attrs["plugin"] != "outer" {
		t.Fatalf("log records %+v, want one with plugin=outer", recs)
	}
}

func TestItem05_ReusablePluginIndependentFibers(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[string]("item5")
	var hits atomic.Int32
	p := runtime.Func("twice", func(ctx *runtime.Context) error {
		_, err := ev.On(ctx, func(string) error { hits.Add(1); return nil })
		return err
	})
	a, b := mustPlugin(t, root, p, nil), mustPlugin(t, root, p, nil)
	if a == b || a.ID() == b.ID() {
		t.Fatal("one plugin applied twice must give two fibers")
	}
	_ = ev.Emit(root, "x")
	if err := a.Dispose(); err != nil {
		t.Fatal(err)
	}
	_ = ev.Emit(root, "y")
	if hits.Load() != 3 || b.State() != runtime.Active || a.State() != runtime.Disposed {
		t.Fatalf("hits %d, a %v, b %v", hits.Load(), a.State(), b.State())
	}
}

func TestItem06_DisposeNewestFirstBestEffort(t *testing.T) {
	root, sink := newRoot(t)
	rec := &recorder{}
	ev := runtime.NewEvent[int]("item6")
	boom := errors.New("e2 failed")
	var child *runtime.Fiber
	f := mustPlugin(t, root, runtime.Func("owner", func(ctx *runtime.Context) error {
		var err error
		child, err = ctx.Plugin(runtime.Func("child", func(ctx *runtime.Context) error {
			_, err := ctx.Effect(func() (func() error, error) {
				return func() error { rec.add("child effect"); return nil }, nil
			})
			return err
		}), nil)
		if err != nil {
			return err
		}
		if _, err := ctx.Effect(func() (func() error, error) {
			return func() error { rec.add("e1"); return nil }, nil
		}); err != nil {
			return err
		}
		if _, err := ev.On(ctx, func(int) error { return nil }); err != nil {
			return err
		}
		_, err = ctx.Effect(func() (func() error, error) {
			return func() error { rec.add("e2"); return boom }, nil
		})
		return err
	}), nil)
	if ctxCount := root.ListenerCount("item6"); ctxCount != 1 {
		t.Fatalf("listeners %d", ctxCount)
	}
	err := f.Dispose()
	if !errors.Is(err, boom) {
		t.Fatalf("Dispose = %v, want the teardown error", err)
	}
	equal(t, "teardown order", rec.list(), []string{"e2", "e1", "child effect"})
	if root.ListenerCount("item6") != 0 || child.State() != runtime.Disposed {
		t.Fatalf("listener or child left: %d, %v", root.ListenerCount("item6"), child.State())
	}
	var logged int
	for _, r := range sink.Records() {
		if r.Message == "teardown failed" && r.Attrs["plugin"] == "owner" && r.Attrs["error"] == "e2 failed" {
			logged++
		}
	}
	if logged != 1 {
		t.Fatalf("teardown error logged %d times: %+v", logged, sink.Records())
	}
	if err := f.Dispose(); err != nil {
		t.Fatalf("second Dispose = %v, want nil", err)
	}
	equal(t, "after second dispose", rec.list(), []string{"e2", "e1", "child effect"})
}

func TestItem07_ApplyFailureIsolated(t *testing.T) {
	for _, mode := range []string{"error", "panic"} {
		t.Run(mode, func(t *testing.T) {
			root, sink := newRoot(t)
			ev := runtime.NewEvent[int]("item7")
			var reports []runtime.ErrorReport
			if _, err := runtime.ErrorEvent.On(root, func(r runtime.ErrorReport) error {
				reports = append(reports, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			boom := errors.New("boom")
			var hits int
			sibling := mustPlugin(t, root, runtime.Func("sibling", func(ctx *runtime.Context) error {
				_, err := ev.On(ctx, func(int) error { hits++; return nil })
				return err
			}), nil)
			var torn bool
			f := mustPlugin(t, root, runtime.Func("bad", func(ctx *runtime.Context) error {
				if _, err := ev.On(ctx, func(int) error { hits += 100; return nil }); err != nil {
					return err
				}
				if _, err := ctx.Effect(func() (func() error, error) {
					return func() error { torn = true; return nil }, nil
				}); err != nil {
					return err
				}
				if mode == "panic" {
					panic(boom)
				}
				return boom
			}), nil)
			err := f.Wait()
			if !errors.Is(err, boom) || f.State() != runtime.Failed || f.Err() != err {
				t.Fatalf("Wait = %v, state %v", err, f.State())
			}
			var pe *runtime.PanicError
			if (mode == "panic") != errors.As(err, &pe) {
				t.Fatalf("panic recovered as %T", err)
			}
			_ = ev.Emit(root, 1)
			if hits != 1 || !torn || sibling.State() != runtime.Active {
				t.Fatalf("hits %d (want only the sibling), torn %v, sibling %v", hits, torn, sibling.State())
			}
			var logged int
			for _, r := range sink.Records() {
				if r.Level == slog.LevelError && r.Attrs["plugin"] == "bad" {
					logged++
				}
			}
			if logged != 1 {
				t.Fatalf("logged %d times", logged)
			}
			if len(reports) != 1 || reports[0].Fiber != f || reports[0].Event != "" || !errors.Is(reports[0].Err, boom) {
				t.Fatalf("error reports %+v", reports)
			}
		})
	}
}

func TestItem08_FailedIsSticky(t *testing.T) {
	root, _ := newRoot(t)
	svc := runtime.NewService[string]("item8")
	var calls atomic.Int32
	fail := true
	f := mustPlugin(t, root, runtime.Configured("flaky", func(ctx *runtime.Context, c greetConfig) error {
		calls.Add(1)
		if fail {
			return errors.New("not yet")
		}
		return nil
	}, runtime.Inject(svc)), nil)
	p1 := mustPlugin(t, root, runtime.Func("p1", func(ctx *runtime.Context) error { return svc.Provide(ctx, "a") }), nil)
	if f.State() != runtime.Failed || calls.Load() != 1 {
		t.Fatalf("state %v calls %d", f.State(), calls.Load())
	}
	// A provider swap does not re-run a FAILED fiber.
	_ = p1.Dispose()
	mustPlugin(t, root, runtime.Func("p2", func(ctx *runtime.Context) error { return svc.Provide(ctx, "b") }), nil)
	if f.State() != runtime.Failed || calls.Load() != 1 {
		t.Fatalf("after provider swap: state %v calls %d", f.State(), calls.Load())
	}
	// Restart is an explicit retry; Update with a new config too.
	if err := f.Restart(); err == nil || f.State() != runtime.Failed || calls.Load() != 2 {
		t.Fatalf("Restart = %v, state %v, calls %d", err, f.State(), calls.Load())
	}
	fail = false
	if err := f.Update(map[string]any{"greeting": "again"}); err != nil {
		t.Fatal(err)
	}
	if f.State() != runtime.Active || calls.Load() != 3 || f.Config().(greetConfig).Greeting != "again" {
		t.Fatalf("after Update: %v, calls %d, config %#v", f.State(), calls.Load(), f.Config())
	}
}

type item9Config struct {
	Root  string `json:"root" jsonschema:"minLength=1"`
	Limit int    `json:"limit,omitempty" jsonschema:"minimum=1,default=10"`
	Mode  string `json:"mode,omitempty" jsonschema:"enum=fast,enum=slow,default=fast"`
}

func TestItem09_ConfigDefaultsAndValidation(t *testing.T) {
	root, sink := newRoot(t)
	var got []item9Config
	p := runtime.Configured("cfg", func(ctx *runtime.Context, c item9Config) error {
		got = append(got, c)
		return nil
	})
	full := item9Config{Root: "/w", Limit: 10, Mode: "fast"}
	inputs := []struct {
		name string
		in   any
	}{
		{"struct with zero omitempty fields", item9Config{Root: "/w"}},
		{"pointer", &item9Config{Root: "/w"}},
		{"map", map[string]any{"root": "/w"}},
		{"raw message", json.RawMessage(`{"root":"/w"}`)},
		{"bytes", []byte(`{"root":"/w","limit":10}`)},
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			got = nil
			runtimetest.Plug(t, root, p, in.in)
			if len(got) != 1 || got[0] != full {
				t.Fatalf("apply got %#v, want %#v", got, full)
			}
		})
	}

	got = nil
	f := mustPlugin(t, root, p, map[string]any{"limit": -1, "mode": "x", "extra": 1})
	const want = `invalid config for plugin "cfg": missing required property "root"; "limit" must be a positive integer; "mode" must be one of "fast", "slow"; unknown property "extra"`
	err := f.Wait()
	var ce *runtime.ConfigError
	var ve *schema.ValidationError
	if err == nil || err.Error() != want || !errors.As(err, &ce) || !errors.As(err, &ve) || len(ve.Violations) != 4 {
		t.Fatalf("Wait = %v\nwant %s", err, want)
	}
	if f.State() != runtime.Pending || len(got) != 0 {
		t.Fatalf("invalid config: state %v, apply ran %d times", f.State(), len(got))
	}
	logged := false
	for _, r := range sink.Records() {
		logged = logged || (r.Attrs["plugin"] == "cfg" && strings.Contains(r.Attrs["error"], `missing required property "root"`))
	}
	if !logged {
		t.Fatal("config error not logged")
	}
	if err := f.Update(map[string]any{"root": ""}); err == nil || f.State() != runtime.Pending {
		t.Fatalf("invalid Update = %v, state %v", err, f.State())
	}
	if err := f.Update(map[string]any{"root": "/w"}); err != nil || f.State() != runtime.Active || len(got) != 1 || got[0] != full {
		t.Fatalf("valid Update = %v, state %v, got %#v", err, f.State(), got)
	}

	// Without a config type the value passes through unchanged.
	cfg := &struct{ X int }{7}
	pass := mustPlugin(t, root, runtime.Func("pass", func(*runtime.Context) error { return nil }), cfg)
	if pass.Config() != any(cfg) {
		t.Fatalf("config %#v, want the same pointer", pass.Config())
	}
}

func TestItem10_InactiveContextRefusesRegistrations(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item10")
	svc := runtime.NewService[int]("item10")
	var ctx *runtime.Context
	f := mustPlugin(t, root, runtime.Func("gone", func(c *runtime.Context) error { ctx = c; return nil }), nil)
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	noop := func() (func() error, error) { return nil, nil }
	checks := map[string]error{}
	_, checks["On"] = ev.On(ctx, func(int) error { return nil })
	_, checks["Once"] = ev.Once(ctx, func(int) error { return nil })
	_, checks["Effect"] = ctx.Effect(noop)
	checks["Provide"] = svc.Provide(ctx, 1)
	_, checks["Plugin"] = ctx.Plugin(runtime.Func("x", func(*runtime.Context) error { return nil }), nil)
	checks["ObserveAll"] = ctx.ObserveAll(func(runtime.Note) {})
	checks["Observe"] = ev.Observe(ctx, func(int) {})
	checks["OnUpdate"] = ctx.OnUpdate(func(any) error { return nil })
	for name, err := range checks {
		if !errors.Is(err, runtime.ErrInactive) || err.Error() != "runtime: cannot create effect on inactive context" {
			t.Errorf("%s on a disposed context: %v", name, err)
		}
	}
	var hit bool
	if _, err := ev.On(root, func(int) error { hit = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := ev.Emit(ctx, 1); err != nil || !hit {
		t.Fatalf("emit on a disposed context: %v, delivered %v", err, hit)
	}
}

func TestItem11_DisposeWaitsForInflightApply(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item11")
	started, release := make(chan *runtime.Fiber), make(chan struct{})
	var torn atomic.Bool
	p := runtime.Func("slow", func(ctx *runtime.Context) error {
		started <- ctx.Fiber()
		<-release
		// Registered after Dispose was called: still torn down.
		if _, err := ev.On(ctx, func(int) error { return nil }); err != nil {
			return err
		}
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { torn.Store(true); return nil }, nil
		})
		return err
	})
	go func() { _, _ = root.Plugin(p, nil) }()
	f := <-started
	disposed := make(chan error)
	go func() { disposed <- f.Dispose() }()
	select {
	case err := <-disposed:
		t.Fatalf("Dispose returned %v while apply was running", err)
	case <-time.After(30 * time.Millisecond):
	}
	close(release)
	if err := <-disposed; err != nil || !torn.Load() || root.ListenerCount("item11") != 0 || f.State() != runtime.Disposed {
		t.Fatalf("after Dispose: err %v, torn %v, listeners %d, state %v",
			err, torn.Load(), root.ListenerCount("item11"), f.State())
	}
}

func TestItem12_StatusChangesObservable(t *testing.T) {
	root, _ := newRoot(t)
	svc := runtime.NewService[int]("item12")
	log := statusLog(t, root, "prov")
	var observed recorder
	if err := runtime.StatusEvent.Observe(root, func(c runtime.StatusChange) {
		if c.Fiber.Name() == "prov" {
			observed.add(c.From.String() + ">" + c.To.String())
		}
	}); err != nil {
		t.Fatal(err)
	}
	f := mustPlugin(t, root, runtime.Func("prov", func(ctx *runtime.Context) error { return svc.Provide(ctx, 1) }), nil)
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	equal(t, "status", log.list(), []string{"LOADING", "ACTIVE", "UNLOADING", "DISPOSED"})
	root.Flush()
	equal(t, "observed", observed.list(), []string{"PENDING>LOADING", "LOADING>ACTIVE", "ACTIVE>UNLOADING", "UNLOADING>DISPOSED"})

	failLog := statusLog(t, root, "bad")
	mustPlugin(t, root, runtime.Func("bad", func(*runtime.Context) error { return errors.New("no") }), nil)
	equal(t, "failed status", failLog.list(), []string{"LOADING", "FAILED"})
}

func TestItem13_UpdateRestartsOrAppliesInPlace(t *testing.T) {
	root, _ := newRoot(t)
	rec := &recorder{}
	restarting := runtime.Configured("restarting", func(ctx *runtime.Context, c greetConfig) error {
		rec.add("apply " + c.Greeting)
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { rec.add("teardown " + c.Greeting); return nil }, nil
		})
		return err
	})
	f := mustPlugin(t, root, restarting, map[string]any{"greeting": "a"})
	if err := f.Update(map[string]any{"greeting": "b"}); err != nil {
		t.Fatal(err)
	}
	equal(t, "restart on update", rec.list(), []string{"apply a", "teardown a", "apply b"})

	rec.reset()
	var applies int
	inPlace := runtime.Configured("in-place", func(ctx *runtime.Context, c greetConfig) error {
		applies++
		return ctx.OnUpdate(func(config any) error {
			next := config.(greetConfig)
			if next.Greeting == "veto" {
				return errors.New("vetoed")
			}
			rec.add("update " + next.Greeting)
			return nil
		})
	})
	g := mustPlugin(t, root, inPlace, nil)
	if err := g.Update(map[string]any{"greeting": "c"}); err != nil {
		t.Fatal(err)
	}
	if err := g.Update(map[string]any{"greeting": "veto"}); err == nil || err.Error() != "vetoed" {
		t.Fatalf("veto: %v", err)
	}
	if err := g.Update(map[string]any{"times": 0.5}); err == nil {
		t.Fatal("invalid config reached OnUpdate")
	}
	equal(t, "in place", rec.list(), []string{"update c"})
	if applies != 1 || g.Config().(greetConfig).Greeting != "c" {
		t.Fatalf("applies %d, config %#v", applies, g.Config())
	}
	// Restart is teardown + apply with the current config.
	rec.reset()
	if err := f.Restart(); err != nil {
		t.Fatal(err)
	}
	equal(t, "restart", rec.list(), []string{"teardown b", "apply b"})
}

type panickyPlugin struct{}

func (panickyPlugin) Name() string                      { panic("no name") }
func (panickyPlugin) Apply(*runtime.Context, any) error { return nil }

func TestItem02_PanickingPluginMetadataRefused(t *testing.T) {
	root, _ := newRoot(t)
	if _, err := root.Plugin(panickyPlugin{}, nil); !errors.Is(err, runtime.ErrInvalidPlugin) ||
		err.Error() != "runtime: invalid plugin: panic: no name" {
		t.Fatalf("Plugin = %v", err)
	}
}

// FuzzItem09_Config feeds arbitrary bytes as a config: the runtime never
// panics, and either rejects the config (PENDING, *ConfigError, apply never
// runs) or hands apply a config that satisfies the schema's bounds.
func FuzzItem09_Config(f *testing.F) {
	for _, seed := range []string{``, `{}`, `{"root":"/w"}`, `{"root":"/w","limit":0}`, `{"root":1}`,
		`{"root":"/w","limit":1e2,"mode":"slow"}`, `{"root":"/w","limit":2.5}`, `[1]`, `null`, `{"root":"/w","x":{}}`} {
		f.Add([]byte(seed))
	}
	root := runtime.New(runtime.WithLogger(discardLogger()))
	f.Cleanup(func() { _ = root.Close() })
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got []item9Config
		fiber, err := root.Plugin(runtime.Configured("fuzz", func(ctx *runtime.Context, c item9Config) error {
			got = append(got, c)
			return nil
		}), raw)
		if err != nil {
			t.Fatal(err)
		}
		defer fiber.Dispose()
		if werr := fiber.Wait(); werr != nil {
			var ce *runtime.ConfigError
			if !errors.As(werr, &ce) || fiber.State() != runtime.Pending || len(got) != 0 {
				t.Fatalf("rejected config: %v, state %v, applies %d", werr, fiber.State(), len(got))
			}
			return
		}
		if len(got) != 1 || got[0].Root == "" || got[0].Limit < 1 || (got[0].Mode != "fast" && got[0].Mode != "slow") {
			t.Fatalf("accepted %q as %#v", raw, got)
		}
	})
}
