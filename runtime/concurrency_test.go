package runtime_test

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

// TestItem32_StressLoadUnloadEmit runs 8 goroutines that apply and dispose
// plugins (listeners, effects, providers, dependents) while emitting, and
// checks that everything is cleaned up. Run it with -race.
func TestItem32_StressLoadUnloadEmit(t *testing.T) {
	d := 2 * time.Second
	if testing.Short() {
		d = 500 * time.Millisecond
	}
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item32")
	w := runtime.NewWaterfall[int, int]("item32/w")
	svc := runtime.NewService[int]("item32")
	var observed atomic.Int64
	if err := ev.Observe(root, func(int) { observed.Add(1) }); err != nil {
		t.Fatal(err)
	}
	listener := runtime.Func("listener", func(ctx *runtime.Context) error {
		if _, err := ev.On(ctx, func(int) error { return nil }); err != nil {
			return err
		}
		if _, err := w.On(ctx, func(v int, next runtime.Next[int]) (int, error) { return next() }); err != nil {
			return err
		}
		_, err := ctx.Effect(func() (func() error, error) { return func() error { return nil }, nil })
		return err
	})
	dependent := runtime.Func("dependent", func(ctx *runtime.Context) error {
		if _, err := svc.Get(ctx); err != nil {
			return err
		}
		_, err := ev.On(ctx, func(int) error { return nil })
		return err
	}, runtime.Inject(svc))
	provider := runtime.Func("provider", func(ctx *runtime.Context) error {
		err := svc.Provide(ctx, 1)
		if errors.Is(err, runtime.ErrServiceConflict) {
			return nil // another goroutine's provider is active
		}
		return err
	})
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	var cycles atomic.Int64
	for g := range 8 {
		wg.Go(func() {
			plugins := []runtime.Plugin{listener, dependent, provider}
			for i := 0; time.Now().Before(stop); i++ {
				f, err := root.Plugin(plugins[(g+i)%len(plugins)], nil)
				if err != nil {
					t.Error(err)
					return
				}
				if err := ev.Emit(root, i); err != nil {
					t.Error(err)
					return
				}
				if _, err := w.Run(root, i, func() (int, error) { return 0, nil }); err != nil {
					t.Error(err)
					return
				}
				if err := f.Dispose(); err != nil {
					t.Error(err)
					return
				}
				cycles.Add(1)
			}
		})
	}
	wg.Wait()
	root.Flush()
	for _, name := range []string{"item32", "item32/w"} {
		if n := root.ListenerCount(name); n != 0 {
			t.Fatalf("%d listeners of %s left", n, name)
		}
	}
	if cycles.Load() == 0 || observed.Load() == 0 {
		t.Fatalf("cycles %d, observed %d", cycles.Load(), observed.Load())
	}
	t.Logf("%d plugin cycles, %d observations", cycles.Load(), observed.Load())
}

// TestItem32_ConcurrentProvidersAndDependents checks the inject machinery
// under contention: dependents applied while providers come and go on other
// goroutines end ACTIVE exactly when a provider is.
func TestItem32_ConcurrentProvidersAndDependents(t *testing.T) {
	root, _ := newRoot(t)
	svc := runtime.NewService[int]("item32b")
	var applies, teardowns atomic.Int64
	dep := runtime.Func("dep", func(ctx *runtime.Context) error {
		if _, err := svc.Get(ctx); err != nil {
			return err
		}
		applies.Add(1)
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error {
				if _, err := svc.Get(ctx); err != nil {
					return fmt.Errorf("teardown lost the service: %w", err)
				}
				teardowns.Add(1)
				return nil
			}, nil
		})
		return err
	}, runtime.Inject(svc))
	var deps []*runtime.Fiber
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				if g%2 == 0 {
					f := mustPlugin(t, root, runtime.Func("prov", func(ctx *runtime.Context) error {
						if err := svc.Provide(ctx, i); !errors.Is(err, runtime.ErrServiceConflict) {
							return err
						}
						return nil
					}), nil)
					if err := f.Dispose(); err != nil {
						t.Error(err)
					}
				} else {
					f := mustPlugin(t, root, dep, nil)
					mu.Lock()
					deps = append(deps, f)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, f := range deps {
		if err := f.Wait(); err != nil {
			t.Fatal(err)
		}
		if f.State() != runtime.Pending {
			t.Fatalf("with no provider left, a dependent is %v", f.State())
		}
	}
	if applies.Load() != teardowns.Load() {
		t.Fatalf("applies %d != teardowns %d", applies.Load(), teardowns.Load())
	}
	// A last provider brings all of them up at once.
	mustPlugin(t, root, runtime.Func("final", func(ctx *runtime.Context) error { return svc.Provide(ctx, 9) }), nil)
	for _, f := range deps {
		if f.State() != runtime.Active {
			t.Fatalf("dependent is %v after the final provider", f.State())
		}
	}
}

func TestItem33_EmitDoesNotAllocate(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[benchPayload]("item33")
	other := runtime.NewEvent[int]("item33/observed")
	var sum int
	_, _ = ev.On(root, func(p benchPayload) error { sum += p.N; return nil })
	// Observers of another event must not make this one pay.
	_ = other.Observe(root, func(int) {})
	svc := runtime.NewService[*benchPayload]("item33")
	_ = svc.Provide(root, &benchPayload{})
	ws := root.Isolate(svc.Name())
	_, _ = ev.On(ws, func(p benchPayload) error { sum += p.N; return nil })
	scope := svc.Domain(ws)
	named := root.Intercept(runtime.Log, runtime.LogConfig{Name: "item33"}).Intercept(svc.Name(), map[string]int{"n": 1})
	w := runtime.NewWaterfall[int, int]("item33/w")
	_, _ = w.On(root, func(v int, _ runtime.Next[int]) (int, error) { return v, nil })
	cases := map[string]struct {
		fn  func()
		max float64
	}{
		"emit":               {func() { _ = ev.Emit(root, benchPayload{N: 1}) }, 0},
		"emit unheard":       {func() { _ = runtime.NewEvent[int]("item33/none").Emit(root, 1) }, 0},
		"emit to a domain":   {func() { _ = ev.EmitTo(ws, scope, benchPayload{N: 1}) }, 0},
		"service get":        {func() { _, _ = svc.Get(root) }, 0},
		"intercepted logger": {func() { _ = named.Logger() }, 0},
		"resolve, no layer":  {func() { _, _ = runtime.ResolveConfig(ws, svc.Name(), benchPayload{N: 1}) }, 0},
		"waterfall first":    {func() { _, _ = w.Run(root, 1, nil) }, 1},
	}
	for name, c := range cases {
		if n := testing.AllocsPerRun(200, c.fn); n > c.max {
			t.Errorf("%s: %v allocs per run, want <= %v", name, n, c.max)
		}
	}
}

type benchPayload struct{ N int }

// TestItem32_ConcurrentTransitionsOnOneFiber hammers one fiber with
// Restart, Update, Wait and provider churn from several goroutines, then
// disposes it: transitions stay serialized (apply and teardown alternate),
// nothing deadlocks, and nothing is left registered.
func TestItem32_ConcurrentTransitionsOnOneFiber(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item32c")
	svc := runtime.NewService[int]("item32c")
	var live, maxLive, applies atomic.Int32
	f := mustPlugin(t, root, runtime.Configured("target", func(ctx *runtime.Context, c greetConfig) error {
		applies.Add(1)
		n := live.Add(1)
		for {
			m := maxLive.Load()
			if n <= m || maxLive.CompareAndSwap(m, n) {
				break
			}
		}
		if _, err := ev.On(ctx, func(int) error { return nil }); err != nil {
			return err
		}
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { live.Add(-1); return nil }, nil
		})
		return err
	}, runtime.Inject(svc)), nil)
	var wg sync.WaitGroup
	within(t, 10*time.Second, func() {
		for g := range 6 {
			wg.Go(func() {
				for i := range 150 {
					switch (g + i) % 4 {
					case 0:
						_ = f.Restart()
					case 1:
						_ = f.Update(map[string]any{"times": i%3 + 1})
					case 2:
						_ = f.Wait()
						_ = ev.Emit(root, i)
					case 3:
						p := mustPlugin(t, root, runtime.Func("prov", func(ctx *runtime.Context) error {
							if err := svc.Provide(ctx, i); !errors.Is(err, runtime.ErrServiceConflict) {
								return err
							}
							return nil
						}), nil)
						_ = p.Dispose()
					}
				}
			})
		}
		wg.Wait()
	})
	if maxLive.Load() != 1 || applies.Load() < 10 {
		t.Fatalf("%d applications (%d live at once at most)", applies.Load(), maxLive.Load())
	}
	t.Logf("%d applications", applies.Load())
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	if live.Load() != 0 || root.ListenerCount("item32c") != 0 || f.State() != runtime.Disposed {
		t.Fatalf("live %d, listeners %d, state %v", live.Load(), root.ListenerCount("item32c"), f.State())
	}
}

// Workspaces isolated under one root load, flap and wait concurrently: each
// consumer only ever sees its own workspace's provider, and WaitActive
// returns once that provider is plugged from another goroutine.
func TestIsolatedWorkspacesConcurrently(t *testing.T) {
	root, _ := newRoot(t)
	const workspaces, rounds = 6, 30
	var wg sync.WaitGroup
	for w := range workspaces {
		wg.Go(func() {
			ws := root.Isolate(FS.Name())
			label := fmt.Sprint("ws", w)
			var wrong atomic.Int32
			consumer, err := ws.Plugin(runtime.Func("consumer", func(ctx *runtime.Context) error {
				if d, err := FS.Get(ctx); err != nil || d.label != label {
					wrong.Add(1)
				}
				return nil
			}, runtime.Inject(FS)), nil)
			if err != nil {
				t.Error(err)
				return
			}
			for range rounds {
				active := make(chan error, 1)
				go func() { active <- consumer.WaitActive(t.Context()) }()
				prov, err := ws.Plugin(provider("local", label), nil)
				if err != nil {
					t.Error(err)
					return
				}
				if err := <-active; err != nil {
					t.Errorf("%s: %v", label, err)
					return
				}
				if err := prov.Dispose(); err != nil {
					t.Error(err)
					return
				}
				if s := consumer.State(); s != runtime.Pending {
					t.Errorf("%s without its provider: %v", label, s)
					return
				}
			}
			if n := wrong.Load(); n != 0 {
				t.Errorf("%s saw another workspace's fs %d times", label, n)
			}
		})
	}
	wg.Wait()
}

// Plugins applied while the root is Reset and then Closed from other
// goroutines are either refused or torn down: nothing outlives Close.
func TestResetAndCloseRacePlugging(t *testing.T) {
	ev := runtime.NewEvent[int]("reset-race")
	p := runtime.Func("listener", func(ctx *runtime.Context) error {
		_, err := ev.On(ctx, func(int) error { return nil })
		return err
	})
	for range 40 {
		root := runtime.New(runtime.WithLogger(discardLogger()))
		var plugged []*runtime.Fiber
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				f, err := root.Plugin(p, nil)
				if errors.Is(err, runtime.ErrInactive) {
					if root.Fiber().State() == runtime.Disposed {
						return
					}
					continue // refused during Reset
				}
				if err != nil {
					t.Error(err)
					return
				}
				plugged = append(plugged, f)
			}
		}()
		var wg sync.WaitGroup
		wg.Go(func() { _ = root.Reset() })
		wg.Go(func() { _ = root.Reset() })
		wg.Wait()
		if err := root.Close(); err != nil {
			t.Fatal(err)
		}
		<-done
		if n := root.ListenerCount(ev.Name()); n != 0 {
			t.Fatalf("%d listeners outlived Close", n)
		}
		for _, f := range plugged {
			if s := f.State(); s != runtime.Disposed {
				t.Fatalf("a plugin is %v after Close", s)
			}
		}
	}
}

// TestTapFlushStress races every way into the observer tap at once: emitters
// whose pauses straddle the tap's timer, each flushing now and then; an
// observer that emits an observed event; a panicking ObserveAll; plugins whose
// observers come and go while batches are in flight; Flush from several
// goroutines during Close, and after it. Each Flush must cover its own
// goroutine's earlier emits, in order; nothing may hang, and no goroutine may
// outlive the root.
func TestTapFlushStress(t *testing.T) {
	base := goruntime.NumGoroutine()
	root := runtime.New(runtime.WithLogger(discardLogger()))
	type hit struct{ g, i int }
	ev := runtime.NewEvent[hit]("tapstress")
	echo := runtime.NewEvent[int]("tapstress/echo")
	const emitters, each = 4, 400
	var seen [emitters]atomic.Int64
	var echoes atomic.Int64
	var disorder atomic.Value
	if err := ev.Observe(root, func(h hit) {
		if n := seen[h.g].Load(); int64(h.i) != n {
			disorder.CompareAndSwap(nil, fmt.Sprintf("emitter %d: got event %d, want %d", h.g, h.i, n))
		}
		seen[h.g].Add(1)
		if h.i%7 == 0 {
			_ = echo.Emit(root, h.i)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := echo.Observe(root, func(int) { echoes.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := root.ObserveAll(func(n runtime.Note) {
		if h, ok := n.Args.(hit); ok && h.i%50 == 0 {
			panic("observer bug")
		}
	}); err != nil {
		t.Fatal(err)
	}
	churn := runtime.Func("churn", func(ctx *runtime.Context) error {
		return ev.Observe(ctx, func(hit) {})
	})
	stop := make(chan struct{})
	var churned sync.WaitGroup
	churned.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			f, err := root.Plugin(churn, nil)
			if err != nil {
				t.Error(err)
				return
			}
			_ = f.Dispose()
		}
	})
	var wg sync.WaitGroup
	for g := range emitters {
		wg.Go(func() {
			for i := range each {
				_ = ev.Emit(root, hit{g, i})
				if i%5 == 0 {
					time.Sleep(time.Duration(i%3) * 500 * time.Microsecond) // around the tap's millisecond
				}
				if (i+g)%3 == 0 {
					root.Flush()
					if n := seen[g].Load(); n != int64(i+1) {
						t.Errorf("emitter %d: after Flush %d of its %d events delivered", g, n, i+1)
						return
					}
				}
			}
		})
	}
	within(t, 20*time.Second, wg.Wait)
	close(stop)
	churned.Wait()
	root.Flush() // the hits, and the echoes they queue behind this barrier
	root.Flush() // the echoes
	if d := disorder.Load(); d != nil {
		t.Fatal(d)
	}
	if want := int64(emitters * ((each + 6) / 7)); echoes.Load() != want {
		t.Fatalf("%d echoes delivered, want %d", echoes.Load(), want)
	}
	for i := range 3 {
		_ = ev.Emit(root, hit{0, each + i}) // left for Close to flush
	}
	var closing sync.WaitGroup
	for range 3 {
		closing.Go(root.Flush)
	}
	within(t, 5*time.Second, func() {
		if err := root.Close(); err != nil {
			t.Error(err)
		}
		closing.Wait()
	})
	within(t, time.Second, root.Flush) // after Close
	if n := seen[0].Load(); n != each+3 {
		t.Fatalf("emitter 0: %d events delivered by Close, want %d", n, each+3)
	}
	n := goruntime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); n > base && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		n = goruntime.NumGoroutine()
	}
	if n > base {
		t.Fatalf("%d goroutines left after Close", n-base)
	}
}
