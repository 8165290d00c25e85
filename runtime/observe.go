package runtime

import (
	"errors"
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

// keepAlways is the capacity a tap's buffer keeps for reuse whatever its
// use. A larger one is kept only while batches fill a quarter of it, and
// only until the tap has been idle for gather: a steady stream reuses its
// buffers, and a quiet tap holds no burst's memory.
const keepAlways = 1024

// gather is how long an idle tap waits, after an event is queued, before
// it publishes: waking a thread for a delivery costs microseconds, more than
// delivering one call's events, so the events of many calls travel
// together. A Flush does not wait.
const gather = time.Millisecond

// observation is the asynchronous tap. An event is boxed into a Note and
// queued only when it has watchers; otherwise emitting it costs at most
// three atomic loads and no allocation.
//
// The tap delivers what is queued as one batch, on a goroutine EventBus
// starts for each Publish. The first job queued into an idle tap arms a
// timer that publishes the queue; a Flush publishes at once. A delivery that
// ends with jobs queued behind its batch arms the timer again, or publishes
// at once for a Flush. So at most one batch is in flight, observers see
// events in emit order, a burst costs one goroutine rather than one per
// event, and emitters never wait for observers. Publish carries no argument,
// which EventBus would box into fresh slices: the batch in flight is the
// tap's own field. Flush is a job in the queue, not WaitAsync, whose
// WaitGroup a concurrent Publish would misuse.
type observation struct {
	count atomic.Int32                // observers of any event, including ObserveAll
	all   atomic.Pointer[[]*observer] // ObserveAll observers
	bus   eventbus.Bus

	mu      sync.Mutex
	queue   []pending   // jobs for the next batch
	flight  []pending   // the batch in flight, or, while idle, the last one's emptied buffer
	next    int         // flight[next] is the job being delivered, to observer sub of its watchers
	sub     int         // (a delivery resumes there if an observer ends its goroutine)
	running bool        // a batch is published and not yet delivered
	urgent  bool        // a Flush waits in the queue
	armed   bool        // timer will publish the queue; never while running
	timer   *time.Timer // calls fire
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
// subscription is owned by c's fiber; fn runs on another goroutine, about a
// millisecond after the emit or at the next Flush.
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

// at returns the watcher at index k of the two lists together.
func (w watchers) at(k int) *observer {
	for _, p := range w {
		if p != nil {
			if k < len(*p) {
				return (*p)[k]
			}
			k -= len(*p)
		}
	}
	return nil
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

// enqueue queues p. Publish only starts a goroutine, so the caller never
// waits for observers.
func (o *observation) enqueue(p pending) {
	o.mu.Lock()
	o.queue = append(o.queue, p)
	o.urgent = o.urgent || p.barrier != nil
	o.unlock(o.schedule(false))
}

// schedule decides what becomes of the queue: nothing while a batch is in
// flight (its delivery decides when it ends), publish now for a Flush or
// when the timer expired, else arm the timer. It reports whether to Publish.
// Callers hold o.mu.
func (o *observation) schedule(expired bool) (publish bool) {
	switch {
	case o.running || len(o.queue) == 0:
	case o.urgent || expired:
		if o.armed {
			o.timer.Stop()
		}
		o.running, o.urgent, o.armed = true, false, false
		o.queue, o.flight = o.flight[:0], o.queue
		return true
	case !o.armed:
		o.arm()
	}
	return false
}

// arm starts the timer. Callers hold o.mu.
func (o *observation) arm() {
	o.armed = true
	if o.timer == nil {
		o.timer = time.AfterFunc(gather, o.fire)
	} else {
		o.timer.Reset(gather)
	}
}

// fire publishes the queue when the timer expires, or, when the tap has
// stayed idle since a delivery armed it, lets burst-sized buffers go. A Flush
// that published first disarmed the timer, and then fire finds nothing to do.
func (o *observation) fire() {
	o.mu.Lock()
	publish := o.schedule(o.armed)
	if !o.running && len(o.queue) == 0 {
		o.armed = false
		if cap(o.queue) > keepAlways {
			o.queue = nil
		}
		if cap(o.flight) > keepAlways {
			o.flight = nil
		}
	}
	o.unlock(publish)
}

// unlock releases o.mu, then publishes if schedule said so.
func (o *observation) unlock(publish bool) {
	o.mu.Unlock()
	if publish {
		o.bus.Publish(observeTopic)
	}
}

// deliver is the bus adapter. It runs the batch in flight in order, then
// sees to what was queued meanwhile, or leaves the tap idle. It runs on a
// bus goroutine and must never let a panic escape, which would kill the
// process. An observer that ends the goroutine (runtime.Goexit, as
// t.FailNow does) would leave the batch running for good and every Flush
// waiting: a fresh goroutine resumes after it instead.
func (r *rt) deliver() {
	o := &r.obs
	// flight, next and sub belong to the one delivery goroutine; the Publish
	// that started it happened after they were set.
	jobs := o.flight
	done := false
	defer func() {
		if !done {
			o.bus.Publish(observeTopic)
		}
	}()
	for ; o.next < len(jobs); o.next, o.sub = o.next+1, 0 {
		p := &jobs[o.next]
		if p.barrier != nil {
			close(p.barrier)
			continue
		}
		for o.sub < p.to.len() {
			w := p.to.at(o.sub)
			o.sub++
			r.notify(w, p.note)
		}
	}
	done = true
	o.next = 0
	clear(jobs) // drop the arguments and observers they held
	if cap(jobs) > keepAlways && len(jobs) < cap(jobs)/4 {
		jobs = nil
	}
	o.mu.Lock()
	o.running, o.flight = false, jobs[:0]
	publish := o.schedule(false)
	if !publish && !o.armed && max(cap(o.queue), cap(o.flight)) > keepAlways {
		o.arm() // idle: fire trims the buffers unless events come first
	}
	o.unlock(publish)
}

// errObserverExited reports an observer that ended its goroutine.
var errObserverExited = errors.New("runtime: observer called runtime.Goexit")

func (r *rt) notify(o *observer, n Note) {
	returned := false
	defer func() {
		if returned {
			return
		}
		err := errObserverExited
		if p := recover(); p != nil {
			err = recovered(p)
		}
		o.ctx.Logger().Error("observer panicked", "event", n.Event, "error", err)
		r.report(o.ctx.fiber, n.Event, err)
	}()
	o.fn(n)
	returned = true
}

// Flush waits until every observation queued so far has been delivered,
// without the millisecond the tap otherwise gathers events for. Do not call
// it from an observer: it would wait for itself.
func (c *Context) Flush() {
	done := make(chan struct{})
	c.rt.obs.enqueue(pending{barrier: done})
	<-done
}
