package runtime_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

func TestItem22_OnOrderPrependAndIdempotentDispose(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item22")
	rec := &recorder{}
	on := func(name string, opts ...runtime.ListenOption) func() {
		d, err := ev.On(root, func(int) error { rec.add(name); return nil }, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	dispA := on("a")
	on("b", runtime.Prepend())
	on("c", runtime.Prepend())
	_ = ev.Emit(root, 0)
	equal(t, "order", rec.list(), []string{"c", "b", "a"})
	dispA()
	dispA() // idempotent: must not remove anything else
	rec.reset()
	_ = ev.Emit(root, 0)
	equal(t, "after dispose", rec.list(), []string{"c", "b"})

	// Two registrations of one function value are two listeners; disposing
	// one leaves the other (no "off by function value").
	rec.reset()
	fn := func(int) error { rec.add("same"); return nil }
	d1, _ := ev.On(root, fn)
	_, _ = ev.On(root, fn)
	d1()
	_ = ev.Emit(root, 0)
	equal(t, "same function twice", rec.list(), []string{"c", "b", "same"})
}

func TestItem23_Once(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item23")
	var hits atomic.Int32
	if _, err := ev.Once(root, func(int) error { hits.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	_ = ev.Emit(root, 1)
	_ = ev.Emit(root, 2)
	if hits.Load() != 1 || root.ListenerCount("item23") != 0 {
		t.Fatalf("once fired %d times, %d listeners left", hits.Load(), root.ListenerCount("item23"))
	}
	d, _ := ev.Once(root, func(int) error { hits.Add(10); return nil })
	d()
	_ = ev.Emit(root, 3)
	if hits.Load() != 1 {
		t.Fatalf("disposed once listener ran: %d", hits.Load())
	}
}

func TestItem24_ListenerGoesWithItsFiber(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item24")
	var hits int
	f := mustPlugin(t, root, runtime.Func("listener", func(ctx *runtime.Context) error {
		// Through an extended context too: it shares the fiber.
		_, err := ev.On(ctx.Extend("k", "v"), func(int) error { hits++; return nil })
		return err
	}), nil)
	_ = ev.Emit(root, 1)
	_ = f.Dispose()
	_ = ev.Emit(root, 2)
	if hits != 1 || root.ListenerCount("item24") != 0 {
		t.Fatalf("hits %d, listeners %d", hits, root.ListenerCount("item24"))
	}
}

func TestItem25_SnapshotAndReentrancy(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item25")
	other := runtime.NewEvent[int]("item25/other")
	rec := &recorder{}
	var d2 func()
	_, _ = ev.On(root, func(n int) error {
		rec.add("1")
		if n == 0 {
			d2()                                                             // removed during the dispatch: still runs in it
			_, _ = ev.On(root, func(int) error { rec.add("3"); return nil }) // added: does not
		}
		return nil
	})
	d2, _ = ev.On(root, func(int) error { rec.add("2"); return nil })
	_ = ev.Emit(root, 0)
	equal(t, "first dispatch", rec.list(), []string{"1", "2"})
	rec.reset()
	_ = ev.Emit(root, 1)
	equal(t, "second dispatch", rec.list(), []string{"1", "3"})

	// A listener may emit, register and dispose listeners, and apply and
	// dispose plugins, without deadlock.
	var innerHits atomic.Int32
	_, _ = other.On(root, func(int) error { innerHits.Add(1); return nil })
	_, _ = ev.On(root, func(n int) error {
		if n != 2 {
			return nil
		}
		if err := other.Emit(root, n); err != nil {
			return err
		}
		d, err := other.On(root, func(int) error { return nil })
		if err != nil {
			return err
		}
		d()
		f, err := root.Plugin(runtime.Func("nested", func(ctx *runtime.Context) error {
			_, err := ev.On(ctx, func(int) error { return nil })
			if err != nil {
				return err
			}
			return other.Emit(ctx, 0)
		}), nil)
		if err != nil {
			return err
		}
		return f.Dispose()
	})
	within(t, 2*time.Second, func() {
		if err := ev.Emit(root, 2); err != nil {
			t.Error(err)
		}
	})
	if innerHits.Load() != 2 {
		t.Fatalf("inner emits delivered %d", innerHits.Load())
	}
}

func TestItem26_EmitIsolatesFailures(t *testing.T) {
	root, sink := newRoot(t)
	ev := runtime.NewEvent[string]("item26")
	var reports []runtime.ErrorReport
	_, _ = runtime.ErrorEvent.On(root, func(r runtime.ErrorReport) error {
		reports = append(reports, r)
		return errors.New("error listener fails too") // logged only: no recursion
	})
	boom := errors.New("denied")
	var ran []string
	f := mustPlugin(t, root, runtime.Func("listeners", func(ctx *runtime.Context) error {
		_, _ = ev.On(ctx, func(string) error { ran = append(ran, "1"); return boom })
		_, _ = ev.On(ctx, func(string) error { ran = append(ran, "2"); panic("kaboom") })
		_, err := ev.On(ctx, func(string) error { ran = append(ran, "3"); return nil })
		return err
	}), nil)
	var err error
	within(t, time.Second, func() { err = ev.Emit(root, "x") })
	equal(t, "ran", ran, []string{"1", "2", "3"})
	var pe *runtime.PanicError
	if !errors.Is(err, boom) || !errors.As(err, &pe) || pe.Value != "kaboom" || err.Error() != "denied\npanic: kaboom" {
		t.Fatalf("Emit = %q", err)
	}
	if len(reports) != 2 || reports[0].Fiber != f || reports[0].Event != "item26" || !errors.Is(reports[0].Err, boom) {
		t.Fatalf("reports %+v", reports)
	}
	var listenerLogs, errorEventLogs int
	for _, r := range sink.Records() {
		switch {
		case r.Attrs["event"] == "item26" && r.Attrs["plugin"] == "listeners":
			listenerLogs++
		case r.Attrs["event"] == "internal/error":
			errorEventLogs++
		}
	}
	if listenerLogs != 2 || errorEventLogs != 2 {
		t.Fatalf("logged %d listener failures and %d error-listener failures", listenerLogs, errorEventLogs)
	}
}

func TestItem27_ParallelRunsConcurrently(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item27")
	// Each listener waits for the other: this finishes only if they run concurrently.
	a, b := make(chan struct{}), make(chan struct{})
	_, _ = ev.On(root, func(int) error { close(a); <-b; return errors.New("left") })
	_, _ = ev.On(root, func(int) error { close(b); <-a; return errors.New("right") })
	var err error
	within(t, 2*time.Second, func() { err = ev.Parallel(root, 1) })
	if err == nil || err.Error() != "left\nright" {
		t.Fatalf("Parallel = %q", err)
	}
}

func TestItem28_SerialAndBail(t *testing.T) {
	root, _ := newRoot(t)
	h := runtime.NewHook[int, string]("item28")
	var third bool
	_, _ = h.On(root, func(int) (string, error) { return "", nil })
	_, _ = h.On(root, func(n int) (string, error) {
		if n < 0 {
			return "", errors.New("negative")
		}
		if n == 0 {
			return "", nil
		}
		return "second", nil
	})
	_, _ = h.On(root, func(int) (string, error) { third = true; return "late", nil })
	if r, err := h.Bail(root, 1); r != "second" || err != nil || third {
		t.Fatalf("Bail = %q, %v, third ran %v", r, err, third)
	}
	if r, err := h.Bail(root, -1); r != "" || err == nil || err.Error() != "negative" || third {
		t.Fatalf("Bail error = %q, %v", r, err)
	}
	if r, err := h.Serial(root, context.Background(), 0); r != "late" || err != nil || !third {
		t.Fatalf("Serial = %q, %v", r, err)
	}
	stop, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Serial(root, stop, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Serial after stop = %v", err)
	}
	panicky := runtime.NewHook[int, int]("item28/panic")
	_, _ = panicky.On(root, func(int) (int, error) { panic("no") })
	var pe *runtime.PanicError
	if _, err := panicky.Bail(root, 0); !errors.As(err, &pe) {
		t.Fatalf("panic in Bail = %v", err)
	}
}

func TestItem29_Waterfall(t *testing.T) {
	root, _ := newRoot(t)
	w := runtime.NewWaterfall[int, int]("item29")
	fallback := func() (int, error) { return 2, nil }
	if v, err := w.Run(root, 1, fallback); v != 2 || err != nil {
		t.Fatalf("no listeners: %v %v", v, err)
	}
	add := func(v int, next runtime.Next[int]) (int, error) {
		r, err := next()
		return v + r, err
	}
	_, _ = w.On(root, add)
	_, _ = w.On(root, add)
	if v, err := w.Run(root, 1, fallback); v != 4 || err != nil {
		t.Fatalf("two next listeners: %v %v", v, err)
	}
	var laterRan bool
	decide, _ := w.On(root, func(v int, _ runtime.Next[int]) (int, error) { return v, nil })
	later, _ := w.On(root, func(int, runtime.Next[int]) (int, error) { laterRan = true; return 100, nil })
	if v, err := w.Run(root, 1, fallback); v != 3 || err != nil || laterRan {
		t.Fatalf("first that does not call next decides: %v %v, later ran %v", v, err, laterRan)
	}
	decide()
	later()

	twice := runtime.NewWaterfall[int, int]("item29/twice")
	_, _ = twice.On(root, func(v int, next runtime.Next[int]) (int, error) {
		_, _ = next()
		return next()
	})
	if _, err := twice.Run(root, 1, fallback); !errors.Is(err, runtime.ErrNextCalledTwice) ||
		err.Error() != "runtime: next() called multiple times" {
		t.Fatalf("next twice: %v", err)
	}
	swallow := runtime.NewWaterfall[int, int]("item29/swallow")
	_, _ = swallow.On(root, func(v int, next runtime.Next[int]) (int, error) {
		_, _ = next()
		_, _ = next()
		return 1, nil // the misuse still surfaces
	})
	if _, err := swallow.Run(root, 1, fallback); !errors.Is(err, runtime.ErrNextCalledTwice) {
		t.Fatalf("swallowed next twice: %v", err)
	}

	panicky := runtime.NewWaterfall[int, int]("item29/panic")
	_, _ = panicky.On(root, add)
	_, _ = panicky.On(root, func(int, runtime.Next[int]) (int, error) { panic("mid-chain") })
	var pe *runtime.PanicError
	if _, err := panicky.Run(root, 1, fallback); !errors.As(err, &pe) || pe.Value != "mid-chain" {
		t.Fatalf("panic: %v", err)
	}
	failing := runtime.NewWaterfall[int, int]("item29/error")
	_, _ = failing.On(root, func(int, runtime.Next[int]) (int, error) { return 0, errors.New("denied") })
	if _, err := failing.Run(root, 1, fallback); err == nil || err.Error() != "denied" {
		t.Fatalf("error: %v", err)
	}

	// next kept past the run is refused, never run against a later run.
	var kept runtime.Next[int]
	keeper := runtime.NewWaterfall[int, int]("item29/keep")
	_, _ = keeper.On(root, func(v int, next runtime.Next[int]) (int, error) { kept = next; return v, nil })
	_, _ = keeper.Run(root, 1, fallback)
	if _, err := kept(); err == nil || !strings.Contains(err.Error(), "after the waterfall returned") {
		t.Fatalf("late next: %v", err)
	}
}

type sessionKey struct{}

// sessionFilter accepts listeners whose context carries its session.
type sessionFilter string

func (s sessionFilter) Accept(c *runtime.Context) bool {
	v := c.Value(sessionKey{})
	return v == nil || v == string(s)
}

func TestItem30_FilteredEmit(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item30")
	rec := &recorder{}
	on := func(ctx *runtime.Context, name string, opts ...runtime.ListenOption) {
		if _, err := ev.On(ctx, func(int) error { rec.add(name); return nil }, opts...); err != nil {
			t.Fatal(err)
		}
	}
	on(root.Extend(sessionKey{}, "s1"), "s1")
	on(root.Extend(sessionKey{}, "s2"), "s2")
	on(root.Extend(sessionKey{}, "s2"), "s2 global", runtime.Global())
	on(root, "unrestricted")
	_ = ev.EmitTo(root, sessionFilter("s1"), 0)
	equal(t, "filtered", rec.list(), []string{"s1", "s2 global", "unrestricted"})
	rec.reset()
	_ = ev.Emit(root, 0)
	equal(t, "unfiltered", rec.list(), []string{"s1", "s2", "s2 global", "unrestricted"})
	// A child plugin inherits the values of the context it was plugged into.
	f := mustPlugin(t, root.Extend(sessionKey{}, "s3"), runtime.Func("in-s3", func(*runtime.Context) error { return nil }), nil)
	if f.Context().Value(sessionKey{}) != "s3" {
		t.Fatal("plugin context does not inherit Extend values")
	}
}

func TestItem31_ObservationBus(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item31")
	slow := make(chan struct{})
	var got atomic.Int64
	if err := ev.Observe(root, func(n int) { <-slow; got.Add(int64(n)) }); err != nil {
		t.Fatal(err)
	}
	if err := ev.Observe(root, func(int) { panic("observer bug") }); err != nil {
		t.Fatal(err)
	}
	var notes []runtime.Note
	done := make(chan struct{})
	if err := root.ObserveAll(func(n runtime.Note) {
		if n.Event == "item31" {
			notes = append(notes, n)
			if len(notes) == 3 {
				close(done)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	// The emits return while the first observer is still blocked on slow.
	within(t, time.Second, func() {
		for i := 1; i <= 3; i++ {
			if err := ev.Emit(root, i); err != nil {
				t.Error(err)
			}
		}
	})
	close(slow)
	root.Flush()
	<-done
	if got.Load() != 6 {
		t.Fatalf("typed observer saw %d", got.Load())
	}
	var seq []int
	for _, n := range notes {
		seq = append(seq, n.Args.(int))
		if n.Time.IsZero() {
			t.Fatal("note without time")
		}
	}
	equal(t, "ObserveAll order", seq, []int{1, 2, 3})

	// Observers are fiber-scoped.
	var late atomic.Int32
	f := mustPlugin(t, root, runtime.Func("observer", func(ctx *runtime.Context) error {
		return ev.Observe(ctx, func(int) { late.Add(1) })
	}), nil)
	_ = f.Dispose()
	_ = ev.Emit(root, 1)
	root.Flush()
	if late.Load() != 0 {
		t.Fatal("disposed observer still notified")
	}
	if !slices.ContainsFunc(notes, func(n runtime.Note) bool { return n.Event == "item31" }) {
		t.Fatal("no notes")
	}
}

// Two packages declaring one event name with different types: the mismatch
// is reported as the listener's error, never a panic.
func TestItem26_SignatureMismatchReported(t *testing.T) {
	root, _ := newRoot(t)
	asInt := runtime.NewEvent[int]("item26/shared")
	asString := runtime.NewEvent[string]("item26/shared")
	_, _ = asInt.On(root, func(int) error { return nil })
	err := asString.Emit(root, "x")
	if err == nil || !strings.Contains(err.Error(), `listener of "item26/shared" has signature func(int) error`) {
		t.Fatalf("Emit = %v", err)
	}
	hook := runtime.NewHook[string, int]("item26/shared")
	if _, err := hook.Bail(root, "x"); err == nil {
		t.Fatal("hook over an event listener: no error")
	}
	w := runtime.NewWaterfall[string, int]("item26/shared")
	if _, err := w.Run(root, "x", nil); err == nil {
		t.Fatal("waterfall over an event listener: no error")
	}
}
