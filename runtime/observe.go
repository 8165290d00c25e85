package runtime

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	eventbus "github.com/asaskevich/EventBus"
)

// Note is one asynchronous observation of an emitted event.
type Note struct {
	Event string
	Args  any
	Time  time.Time
}

// observer is one asynchronous subscription; its identity is its pointer.
type observer struct {
	ctx *Context
	fn  func(Note)
}

// delivery is what travels through the bus: the note plus the observers that
// were registered when the event was emitted (so an observer removed later,
// e.g. at Close, still receives what happened before its removal).
//
// EventBus runs every delivery on its own goroutine, in no particular order;
// the pump publishes a delivery only once the previous one is done, so
// observers see events in the order they were emitted, and a slow observer
// makes events wait in the queue rather than piling up goroutines.
type delivery struct {
	note Note
	to   [2][]*observer // the event's observers, the ObserveAll ones
	done chan struct{}
}

// observation is the asynchronous tap. Emit publishes to it only when count
// is non-zero, so an unobserved event costs one atomic load.
//
// Only the pump goroutine touches the bus: EventBus counts async handlers in
// a sync.WaitGroup, and an Add racing a Wait (a Publish during a Flush)
// panics or is reported by the race detector. Serializing both calls on one
// goroutine, fed by an unbounded queue, removes that hazard without ever
// blocking an emitter.
type observation struct {
	count atomic.Int32                // observers of any event, including ObserveAll
	all   atomic.Pointer[[]*observer] // ObserveAll observers

	mu      sync.Mutex
	queue   []pumpItem
	running bool
	bus     *asyncBus
}

// pumpItem is one job for the pump: publish d on slot's topic, subscribe
// slot's topic (d nil), or answer a flush (barrier).
type pumpItem struct {
	slot    *slot
	d       *delivery
	barrier chan struct{}
}

// asyncBus hides github.com/asaskevich/EventBus: one SubscribeAsync
// (non-transactional) per topic with a fixed-signature adapter that recovers
// panics; never Unsubscribe, SubscribeOnce or transactional mode (see
// docs/architecture.md for the hazards). Owned by the pump goroutine.
type asyncBus struct {
	bus     eventbus.Bus
	topics  map[*slot]bool
	deliver func(*delivery)
	last    <-chan struct{} // done of the previous delivery
}

// subscribe registers the topic's adapter once: when its first observer
// appears, or before its first publish (observed only through ObserveAll).
func (b *asyncBus) subscribe(s *slot) {
	if !b.topics[s] {
		b.topics[s] = true
		if err := b.bus.SubscribeAsync(s.name, b.deliver, false); err != nil {
			panic(err) // b.deliver is a func: SubscribeAsync cannot fail
		}
	}
}

func (b *asyncBus) publish(s *slot, d *delivery) {
	<-b.last // one delivery in flight at a time
	d.done = make(chan struct{})
	b.last = d.done
	b.subscribe(s)
	b.bus.Publish(s.name, d)
}

func (r *rt) initObservation() {
	start := make(chan struct{})
	close(start)
	r.obs.bus = &asyncBus{bus: eventbus.New(), topics: make(map[*slot]bool), deliver: r.deliver, last: start}
}

// addObserver registers fn for event id (or every event when id is 0) as an
// effect of ctx's fiber.
func (r *rt) addObserver(ctx *Context, id uint32, name string, fn func(Note)) error {
	o := &observer{ctx: ctx, fn: fn}
	var s *slot
	list := &r.obs.all
	if id != 0 {
		r.mu.Lock()
		s = r.slotFor(id, name)
		r.mu.Unlock()
		list = &s.observers
	}
	_, err := ctx.fiber.track(func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if removeFrom(list, o) {
			r.obs.count.Add(-1)
		}
		return nil
	}, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		insertInto(list, o, false)
		r.obs.count.Add(1)
		return nil
	})
	if err == nil && s != nil {
		r.obs.enqueue(pumpItem{slot: s})
	}
	return err
}

// ObserveAll subscribes fn, asynchronously, to every emit-mode event. The
// subscription is owned by c's fiber; fn runs on another goroutine.
func (c *Context) ObserveAll(fn func(Note)) error {
	if fn == nil {
		return fmt.Errorf("runtime: nil observer")
	}
	return c.rt.addObserver(c, 0, "", fn)
}

// observe publishes one emitted event if anyone observes it. The slow path:
// only reached when some observer exists.
func (r *rt) observe(id uint32, name string, args any) {
	s := r.slot(id)
	var mine []*observer
	if s != nil {
		if p := s.observers.Load(); p != nil {
			mine = *p
		}
	}
	var all []*observer
	if p := r.obs.all.Load(); p != nil {
		all = *p
	}
	if len(mine) == 0 && len(all) == 0 {
		return
	}
	if s == nil {
		r.mu.Lock()
		s = r.slotFor(id, name)
		r.mu.Unlock()
	}
	d := &delivery{note: Note{Event: name, Args: args, Time: time.Now()}, to: [2][]*observer{mine, all}}
	r.obs.enqueue(pumpItem{slot: s, d: d})
}

func (o *observation) enqueue(it pumpItem) {
	o.mu.Lock()
	o.queue = append(o.queue, it)
	start := !o.running
	o.running = true
	o.mu.Unlock()
	if start {
		go o.pump()
	}
}

// pump publishes queued deliveries in order and answers flush barriers. It
// exits when the queue is empty; enqueue starts it again.
func (o *observation) pump() {
	for {
		o.mu.Lock()
		batch := o.queue
		o.queue = nil
		if len(batch) == 0 {
			o.running = false
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
		for _, it := range batch {
			if it.barrier != nil {
				o.bus.bus.WaitAsync()
				close(it.barrier)
				continue
			}
			if it.d == nil {
				o.bus.subscribe(it.slot)
				continue
			}
			o.bus.publish(it.slot, it.d)
		}
	}
}

// deliver is the bus adapter: it runs on a bus goroutine and must never let
// a panic escape, which would kill the process.
func (r *rt) deliver(d *delivery) {
	defer close(d.done)
	for _, list := range d.to {
		for _, o := range list {
			r.notify(o, d.note)
		}
	}
}

func (r *rt) notify(o *observer, n Note) {
	defer func() {
		if p := recover(); p != nil {
			err := recovered(p)
			o.ctx.Logger().Error("observer panicked", "event", n.Event, "error", err)
			r.report(o.ctx.fiber, n.Event, err)
		}
	}()
	o.fn(n)
}

// Flush waits until every observation published so far has been delivered.
// Do not call it from an observer: it would wait for itself.
func (c *Context) Flush() {
	done := make(chan struct{})
	c.rt.obs.enqueue(pumpItem{barrier: done})
	<-done
}
