package runtime

import (
	"sync/atomic"
	"testing"
)

type benchArgs struct{ N int }

func BenchmarkEmit1(b *testing.B)  { benchEmit(b, 1) }
func BenchmarkEmit10(b *testing.B) { benchEmit(b, 10) }

func benchEmit(b *testing.B, listeners int) {
	root := New()
	defer root.Close()
	ev := NewEvent[benchArgs]("bench/emit")
	var hits int
	for range listeners {
		if _, err := ev.On(root, func(a benchArgs) error { hits += a.N; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = ev.Emit(root, benchArgs{N: 1})
	}
	if hits == 0 {
		b.Fatal("no listener ran")
	}
}

// BenchmarkEmitDomain emits from an isolated workspace scoped to its domain:
// 10 listeners, 5 in the workspace and 5 on the root, the filter built once.
func BenchmarkEmitDomain(b *testing.B) {
	root := New()
	defer root.Close()
	ev := NewEvent[benchArgs]("bench/emit-domain")
	svc := NewService[int]("bench/domain")
	ws := root.Isolate(svc.Name())
	var hits int
	for i := range 10 {
		ctx := root
		if i%2 == 0 {
			ctx = ws
		}
		if _, err := ev.On(ctx, func(a benchArgs) error { hits += a.N; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	scope := svc.Domain(ws)
	b.ReportAllocs()
	for b.Loop() {
		_ = ev.EmitTo(ws, scope, benchArgs{N: 1})
	}
	if hits != 5*b.N {
		b.Fatalf("%d hits for %d emits, want 5 each", hits, b.N)
	}
}

func BenchmarkWaterfallFirstDecides(b *testing.B) {
	root := New()
	defer root.Close()
	w := NewWaterfall[int, int]("bench/waterfall-first")
	for i := range 3 {
		if _, err := w.On(root, func(a int, next Next[int]) (int, error) { return a + i, nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if v, err := w.Run(root, 1, nil); v != 1 || err != nil {
			b.Fatal(v, err)
		}
	}
}

func BenchmarkWaterfallNext(b *testing.B) {
	root := New()
	defer root.Close()
	w := NewWaterfall[int, int]("bench/waterfall-next")
	if _, err := w.On(root, func(a int, next Next[int]) (int, error) {
		v, err := next()
		return v + a, err
	}); err != nil {
		b.Fatal(err)
	}
	fallback := func() (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		if v, err := w.Run(root, 1, fallback); v != 2 || err != nil {
			b.Fatal(v, err)
		}
	}
}

func BenchmarkServiceLookup(b *testing.B) {
	root := New()
	defer root.Close()
	svc := NewService[*benchArgs]("bench-svc")
	if err := svc.Provide(root, &benchArgs{N: 1}); err != nil {
		b.Fatal(err)
	}
	var ctx *Context
	if _, err := root.Plugin(Func("user", func(c *Context) error { ctx = c; return nil }, Inject(svc)), nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if v, err := svc.Get(ctx); err != nil || v.N != 1 {
			b.Fatal(v, err)
		}
	}
}

func BenchmarkPluginCycle(b *testing.B) {
	root := New()
	defer root.Close()
	p := Func("empty", func(*Context) error { return nil })
	b.ReportAllocs()
	for b.Loop() {
		f, err := root.Plugin(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Dispose(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPluginCycleWithEffects(b *testing.B) {
	root := New()
	defer root.Close()
	ev := NewEvent[int]("bench/cycle")
	p := Func("effects", func(ctx *Context) error {
		if _, err := ev.On(ctx, func(int) error { return nil }); err != nil {
			return err
		}
		_, err := ctx.Effect(func() (func() error, error) { return func() error { return nil }, nil })
		return err
	})
	b.ReportAllocs()
	for b.Loop() {
		f, err := root.Plugin(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Dispose(); err != nil {
			b.Fatal(err)
		}
	}
}

type benchLimits struct {
	Read  int `json:"read,omitempty"`
	Write int `json:"write,omitempty"`
}

// BenchmarkResolveConfig merges two Intercept layers into a service's
// config, as a service does on a call from an intercepted subtree.
func BenchmarkResolveConfig(b *testing.B) {
	root := New()
	defer root.Close()
	svc := NewService[int]("bench/resolve")
	ctx := root.Intercept(svc.Name(), map[string]int{"read": 1}).Intercept(svc.Name(), map[string]int{"write": 2})
	b.ReportAllocs()
	for b.Loop() {
		if c, err := ResolveConfig(ctx, svc.Name(), benchLimits{Read: 10, Write: 10}); err != nil || c.Write != 2 {
			b.Fatal(c, err)
		}
	}
}

// BenchmarkResolveConfigNoLayer is the same call from a context with no
// Intercept: what every call of such a service pays.
func BenchmarkResolveConfigNoLayer(b *testing.B) {
	root := New()
	defer root.Close()
	svc := NewService[int]("bench/resolve-none")
	ctx := root.Isolate(svc.Name())
	b.ReportAllocs()
	for b.Loop() {
		if c, err := ResolveConfig(ctx, svc.Name(), benchLimits{Read: 10}); err != nil || c.Read != 10 {
			b.Fatal(c, err)
		}
	}
}

// benchNote is an event argument too large to box without allocating, like
// the registry's Start and Result.
type benchNote struct {
	Tool string
	N    int
}

// BenchmarkEmitObserved is an emit with one listener, when nothing observes
// (none), when only another event is observed (other), when this event is
// observed (this), and when everything is (all). The observed variants flush
// before the timer stops, so the delivery, done on other goroutines, is
// inside the time and the allocations.
func BenchmarkEmitObserved(b *testing.B) {
	for _, v := range []string{"none", "other", "this", "all"} {
		b.Run(v, func(b *testing.B) {
			root := New()
			defer root.Close()
			ev := NewEvent[benchNote]("bench/observed")
			if _, err := ev.On(root, func(benchNote) error { return nil }); err != nil {
				b.Fatal(err)
			}
			var seen atomic.Int64
			var err error
			switch v {
			case "other":
				err = NewEvent[benchNote]("bench/observed-other").Observe(root, func(benchNote) { seen.Add(1) })
			case "this":
				err = ev.Observe(root, func(benchNote) { seen.Add(1) })
			case "all":
				err = root.ObserveAll(func(Note) { seen.Add(1) })
			}
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				_ = ev.Emit(root, benchNote{Tool: "read", N: i})
			}
			root.Flush()
			want := int64(b.N)
			if v == "none" || v == "other" {
				want = 0
			}
			if seen.Load() != want {
				b.Fatalf("observed %d of %d", seen.Load(), want)
			}
		})
	}
}
