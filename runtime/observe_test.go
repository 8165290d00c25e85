package runtime_test

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

// TestItem31_FlushRacesPublish: emitters and flushers on many goroutines
// must stay clean under -race (EventBus counts deliveries in a WaitGroup that
// a Flush must not wait on while a Publish runs), and each Flush must cover
// what was emitted before it.
func TestItem31_FlushRacesPublish(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("item31/flush")
	var delivered atomic.Int64
	if err := ev.Observe(root, func(int) { delivered.Add(1) }); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				_ = ev.Emit(root, i)
				if g%2 == 0 && i%10 == 0 {
					root.Flush()
				}
			}
		})
	}
	wg.Wait()
	root.Flush()
	if delivered.Load() != 1200 {
		t.Fatalf("delivered %d of 1200", delivered.Load())
	}
}

// TestItem31_ObserverMayEmitAndRegister: observers run outside every lock,
// so an observer can emit (observed) events and register listeners.
func TestItem31_ObserverMayEmitAndRegister(t *testing.T) {
	root, _ := newRoot(t)
	ping := runtime.NewEvent[int]("item31/ping")
	pong := runtime.NewEvent[int]("item31/pong")
	got := make(chan int, 10)
	if err := ping.Observe(root, func(n int) {
		if _, err := pong.On(root, func(int) error { return nil }); err != nil {
			t.Error(err)
		}
		_ = pong.Emit(root, n+1)
	}); err != nil {
		t.Fatal(err)
	}
	if err := pong.Observe(root, func(n int) { got <- n }); err != nil {
		t.Fatal(err)
	}
	_ = ping.Emit(root, 1)
	select {
	case n := <-got:
		if n != 2 {
			t.Fatalf("pong %d", n)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("observer's emit never delivered")
	}
}

// TestObservationLeavesNoGoroutines: the last delivery ends soon after Close
// returns; an unobserved emit starts nothing.
func TestObservationLeavesNoGoroutines(t *testing.T) {
	settle := func(limit int) int {
		n := goruntime.NumGoroutine()
		for deadline := time.Now().Add(2 * time.Second); n > limit && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
			n = goruntime.NumGoroutine()
		}
		return n
	}
	base := goruntime.NumGoroutine()
	root := runtime.New(runtime.WithLogger(discardLogger()))
	ev := runtime.NewEvent[int]("leak")
	_, _ = ev.On(root, func(int) error { return nil })
	for i := range 100 {
		_ = ev.Emit(root, i)
	}
	if n := goruntime.NumGoroutine(); n > base {
		t.Fatalf("unobserved emits started %d goroutines", n-base)
	}
	if err := ev.Observe(root, func(int) {}); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		_ = ev.Emit(root, i)
	}
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}
	if n := settle(base); n > base {
		t.Fatalf("%d goroutines left after Close", n-base)
	}
}

// A stalled observer makes events wait in the tap's queue: it must not cost
// a goroutine per emitted event.
func TestSlowObserverQueuesEventsNotGoroutines(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("stalled")
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // runs before the root's Close, so a failure cannot hang Flush
	var seen atomic.Int64
	if err := ev.Observe(root, func(int) { <-release; seen.Add(1) }); err != nil {
		t.Fatal(err)
	}
	base := goruntime.NumGoroutine()
	const n = 500
	for i := range n {
		if err := ev.Emit(root, i); err != nil {
			t.Fatal(err)
		}
	}
	if grown := goruntime.NumGoroutine() - base; grown > 10 {
		t.Fatalf("%d goroutines for %d events behind a stalled observer", grown, n)
	}
	unblock()
	root.Flush()
	if seen.Load() != n {
		t.Fatalf("observer saw %d of %d events", seen.Load(), n)
	}
}

// wide is an event argument that boxing into an interface must allocate.
type wide struct {
	Tool string
	N    int
}

// An event nobody observes is never boxed, even while other events are
// observed, by their own observers or by ObserveAll of another root.
func TestUnobservedEventIsNotBoxed(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[wide]("unboxed")
	if _, err := ev.On(root, func(wide) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := runtime.NewEvent[wide]("unboxed/other").Observe(root, func(wide) {}); err != nil {
		t.Fatal(err)
	}
	other, _ := newRoot(t)
	if err := other.ObserveAll(func(runtime.Note) {}); err != nil {
		t.Fatal(err)
	}
	tool := strings.Repeat("x", 3) // not a constant, so the box cannot be static
	if n := testing.AllocsPerRun(1000, func() { _ = ev.Emit(root, wide{Tool: tool, N: 1000}) }); n != 0 {
		t.Fatalf("%v allocs per unobserved emit, want 0", n)
	}
}

// Events queued behind a stalled observer travel together, and every
// observer still sees each emitter's events in emit order, the typed ones
// and ObserveAll alike.
func TestObserversSeeEmitOrderAcrossBatches(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[wide]("ordered")
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	const emitters, each = 4, 300
	var typed, all [emitters][]int // appended to by one delivery goroutine at a time
	if err := ev.Observe(root, func(w wide) {
		<-release
		typed[w.N/each] = append(typed[w.N/each], w.N%each)
	}); err != nil {
		t.Fatal(err)
	}
	if err := root.ObserveAll(func(n runtime.Note) {
		if w, ok := n.Args.(wide); ok {
			all[w.N/each] = append(all[w.N/each], w.N%each)
		}
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range emitters {
		wg.Go(func() {
			for i := range each {
				_ = ev.Emit(root, wide{Tool: "t", N: g*each + i})
			}
		})
	}
	within(t, 5*time.Second, wg.Wait) // emitters never wait for the stalled observer
	unblock()
	root.Flush()
	want := make([]int, each)
	for i := range want {
		want[i] = i
	}
	for g := range emitters {
		equal(t, fmt.Sprintf("typed, emitter %d", g), typed[g], want)
		equal(t, fmt.Sprintf("ObserveAll, emitter %d", g), all[g], want)
	}
}

// An observer disposed while its events wait in the queue still receives
// them, and nothing emitted after its removal; a panicking observer is
// reported for each event and stops neither the others nor the rest of its
// batch.
func TestQueuedEventsOutliveRemovalAndPanics(t *testing.T) {
	root, logs := newRoot(t)
	ev := runtime.NewEvent[int]("outlive")
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	if err := ev.Observe(root, func(int) { <-release }); err != nil {
		t.Fatal(err)
	}
	if err := ev.Observe(root, func(n int) { panic(fmt.Sprintf("observer bug %d", n)) }); err != nil {
		t.Fatal(err)
	}
	var reports atomic.Int32
	if _, err := runtime.ErrorEvent.On(root, func(r runtime.ErrorReport) error {
		if r.Event == "outlive" {
			reports.Add(1)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got []int // appended to by one delivery goroutine at a time
	f := mustPlugin(t, root, runtime.Func("leaving", func(ctx *runtime.Context) error {
		return ev.Observe(ctx, func(n int) { got = append(got, n) })
	}), nil)
	for i := range 3 {
		_ = ev.Emit(root, i)
	}
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	_ = ev.Emit(root, 3)
	unblock()
	root.Flush()
	equal(t, "removed observer saw", got, []int{0, 1, 2})
	if n := reports.Load(); n != 4 {
		t.Fatalf("%d panics reported, want 4", n)
	}
	var logged []string
	for _, r := range logs.Records() {
		if r.Message == "observer panicked" && r.Attrs["event"] == "outlive" {
			logged = append(logged, r.Attrs["error"])
		}
	}
	if len(logged) != 4 || !strings.Contains(logged[3], "observer bug 3") {
		t.Fatalf("logged panics %q, want 4 ending with observer bug 3", logged)
	}
}

// Observed events reach their observers without a Flush, once the tap's
// timer expires; a Flush that overtakes the armed timer delivers them once,
// never again when the timer would have fired.
func TestObservedEventsArriveWithoutFlush(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("unflushed")
	got := make(chan int, 10)
	if err := ev.Observe(root, func(n int) { got <- n }); err != nil {
		t.Fatal(err)
	}
	next := func() int {
		t.Helper()
		select {
		case n := <-got:
			return n
		case <-time.After(2 * time.Second):
			t.Fatal("observed event never delivered")
			return 0
		}
	}
	_ = ev.Emit(root, 1)
	if n := next(); n != 1 {
		t.Fatalf("got %d, want 1", n)
	}
	for i := 2; i <= 4; i++ {
		_ = ev.Emit(root, i)
		root.Flush()
	}
	time.Sleep(5 * time.Millisecond) // past every timer those emits armed
	_ = ev.Emit(root, 5)
	var seq []int
	for range 4 {
		seq = append(seq, next())
	}
	equal(t, "deliveries", seq, []int{2, 3, 4, 5})
	root.Flush()
	if len(got) != 0 {
		t.Fatalf("%d events delivered twice", len(got))
	}
}

// BenchmarkObservedFlush is the tap's worst case: each iteration emits one
// observed event and flushes it, so every event is a batch of its own,
// published at once, on a goroutine of its own.
func BenchmarkObservedFlush(b *testing.B) {
	root := runtime.New(runtime.WithLogger(discardLogger()))
	defer root.Close()
	ev := runtime.NewEvent[wide]("bench/observed-flush")
	var seen int // written by the delivery, read after Flush
	if err := ev.Observe(root, func(wide) { seen++ }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = ev.Emit(root, wide{Tool: "read", N: 1})
		root.Flush()
	}
	if seen != b.N {
		b.Fatalf("observed %d of %d", seen, b.N)
	}
}

// heapAfterGC is the live heap once the garbage collector has run.
func heapAfterGC() uint64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A burst queued behind a stalled observer is let go once it is delivered,
// even when no event follows it: an idle tap keeps no burst-sized buffer.
func TestBurstMemoryGoesWhenTapIdles(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("burst")
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	if err := ev.Observe(root, func(n int) {
		if n >= 0 {
			<-release
		}
	}); err != nil {
		t.Fatal(err)
	}
	_ = ev.Emit(root, -1)
	root.Flush() // warm: the tap's small buffers exist
	before := heapAfterGC()
	const n = 200_000 // at about 80 bytes a queued event, 16 MB
	for i := range n {
		_ = ev.Emit(root, i%200) // small ints box without allocating
	}
	unblock()
	root.Flush() // returns at its barrier, maybe before the delivery lets go
	kept := int64(heapAfterGC()) - int64(before)
	for deadline := time.Now().Add(time.Second); kept > 2<<20 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		kept = int64(heapAfterGC()) - int64(before)
	}
	if kept > 2<<20 {
		t.Fatalf("%d bytes kept after a delivered burst of %d events", kept, n)
	}
}

// An observer that ends its goroutine (runtime.Goexit, as t.FailNow does)
// must not wedge the tap: the rest of its batch is still delivered, later
// events too, and Flush returns.
func TestObserverGoexitDoesNotWedgeTap(t *testing.T) {
	root, logs := newRoot(t)
	ev := runtime.NewEvent[int]("goexit")
	if err := ev.Observe(root, func(n int) {
		if n == 1 {
			goruntime.Goexit()
		}
	}); err != nil {
		t.Fatal(err)
	}
	var got []int // appended to by one delivery goroutine at a time
	if err := ev.Observe(root, func(n int) { got = append(got, n) }); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		_ = ev.Emit(root, i)
	}
	within(t, 2*time.Second, root.Flush)
	_ = ev.Emit(root, 3)
	within(t, 2*time.Second, root.Flush)
	equal(t, "delivered", got, []int{0, 1, 2, 3})
	var logged []string
	for _, r := range logs.Records() {
		if r.Attrs["event"] == "goexit" {
			logged = append(logged, r.Message+": "+r.Attrs["error"])
		}
	}
	equal(t, "logged", logged, []string{"observer panicked: runtime: observer called runtime.Goexit"})
}
