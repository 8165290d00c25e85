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

// watchers are the observers of one emitted event, taken when it was emitted
// (so an observer removed later, e.g. at Close, still receives what happened
// before its removal): the event's own list, then the ObserveAll list. Both
// are copy-on-write snapshots, never modified, so a pointer to each will do.
type watchers [2]*[]*observer

// pending is one queued job for the tap: a note for its watchers, or, when
// barrier is set, a Flush to answer.
type pending struct {
	note    Note
	to      watchers
	barrier chan struct{}
}

// maxKept bounds the buffer a delivery keeps for reuse, so that one burst
// behind a slow observer does not pin its memory for good.
const maxKept = 1024

// observation is the asynchronous tap. An event is boxed into a Note and
// queued only when it has watchers; otherwise emitting it costs at most
// three atomic loads and no allocation.
//
// The tap delivers what is queued as one batch, on a goroutine EventBus
// starts for each Publish: whoever queues into an idle tap publishes, and a
// delivery that finds jobs queued behind its batch publishes them before it
// returns. So at most one batch is in flight, observers see events in emit
// order, a burst costs one goroutine rather than one per event, and emitters
// never wait for observers. Publish carries no argument, which EventBus
// would box into fresh slices: the batch in flight is the tap's own field.
// Flush is a job in the queue, not WaitAsync, whose WaitGroup a concurrent
// Publish would misuse.
type observation struct {
	count atomic.Int32                // observers of any event, including ObserveAll
	all   atomic.Pointer[[]*observer] // ObserveAll observers
	bus   eventbus.Bus

	mu      sync.Mutex
	queue   []pending // jobs for the next batch
	flight  []pending // the batch in flight, or, while idle, the last one's emptied buffer
	running bool      // a batch is published and not yet delivered
}

// observeTopic is the tap's only EventBus topic.
const observeTopic = "runtime/observe"

// initObservation subscribes the tap's adapter, r.deliver: one fixed
// signature, non-transactional; the runtime never calls Unsubscribe,
// SubscribeOnce or WaitAsync (see docs/architecture.md for the hazards).
func (r *rt) initObservation() {
	r.obs.bus = eventbus.New()
	if err := r.obs.bus.SubscribeAsync(observeTopic, r.deliver, false); err != nil {
		panic(err) // r.deliver is a func: SubscribeAsync cannot fail
	}
}

// addObserver registers fn for event id (or every event when id is 0) as an
// effect of ctx's fiber.
func (r *rt) addObserver(ctx *Context, id uint32, name string, fn func(Note)) error {
	o := &observer{ctx: ctx, fn: fn}
	list := &r.obs.all
	if id != 0 {
		r.mu.Lock()
		list = &r.slotFor(id, name).observers
		r.mu.Unlock()
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

// watching returns the observers of event id, and whether there is any. It
// runs on every emit, before the arguments are boxed: an event nobody
// observes costs no allocation even while other events are observed.
func (r *rt) watching(id uint32) (to watchers, ok bool) {
	if r.obs.count.Load() == 0 {
		return to, false
	}
	if s := r.slot(id); s != nil {
		to[0] = s.observers.Load()
	}
	to[1] = r.obs.all.Load()
	return to, to.len() != 0
}

func (w watchers) len() int {
	n := 0
	for _, p := range w {
		if p != nil {
			n += len(*p)
		}
	}
	return n
}

// observe queues one emitted event for its watchers. Only ObserveAll
// observers see the Note itself, so only they cost a clock read.
func (r *rt) observe(name string, args any, to watchers) {
	n := Note{Event: name, Args: args}
	if all := to[1]; all != nil && len(*all) != 0 {
		n.Time = time.Now()
	}
	r.obs.enqueue(pending{note: n, to: to})
}

// enqueue queues p and, if no batch is in flight, publishes the queue.
// Publish only starts a goroutine, so the caller never waits for observers.
func (o *observation) enqueue(p pending) {
	o.mu.Lock()
	o.queue = append(o.queue, p)
	start := !o.running
	if start {
		o.running = true
		o.queue, o.flight = o.flight[:0], o.queue
	}
	o.mu.Unlock()
	if start {
		o.bus.Publish(observeTopic)
	}
}

// deliver is the bus adapter. It runs the batch in flight in order, then
// publishes what was queued meanwhile, or leaves the tap idle. It runs on a
// bus goroutine and must never let a panic escape, which would kill the
// process.
func (r *rt) deliver() {
	o := &r.obs
	jobs := o.flight // set before the Publish that started this goroutine
	for i := range jobs {
		p := &jobs[i]
		if p.barrier != nil {
			close(p.barrier)
			continue
		}
		for _, list := range p.to {
			if list != nil {
				for _, w := range *list {
					r.notify(w, p.note)
				}
			}
		}
	}
	clear(jobs) // drop the arguments and observers they held
	if cap(jobs) > maxKept {
		jobs = nil
	}
	o.mu.Lock()
	next := len(o.queue) != 0
	if next {
		o.queue, o.flight = jobs[:0], o.queue
	} else {
		o.running = false
		o.flight = jobs[:0]
	}
	o.mu.Unlock()
	if next {
		o.bus.Publish(observeTopic)
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

// Flush waits until every observation queued so far has been delivered.
// Do not call it from an observer: it would wait for itself.
func (c *Context) Flush() {
	done := make(chan struct{})
	c.rt.obs.enqueue(pending{barrier: done})
	<-done
}
