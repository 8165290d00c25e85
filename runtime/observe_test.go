package runtime_test

import (
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

// TestItem31_FlushRacesPublish: EventBus counts deliveries in a WaitGroup,
// and a Publish racing WaitAsync is a WaitGroup misuse. Emitters and
// flushers on many goroutines must stay clean under -race, and each Flush
// must cover what was emitted before it.
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

// TestObservationLeavesNoGoroutines: the pump exits when its queue is empty
// and every bus delivery has finished once Close returns; an unobserved
// emit starts nothing.
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

// A stalled observer makes events wait in the pump's queue: it must not cost
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
