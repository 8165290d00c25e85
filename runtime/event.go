package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Event names are interned process-wide into small integers so that a
// dispatch finds its listeners with two atomic loads and an index, without
// hashing the name.
var eventNames struct {
	mu  sync.Mutex
	ids map[string]uint32
}

func internEvent(name string) uint32 {
	eventNames.mu.Lock()
	defer eventNames.mu.Unlock()
	if eventNames.ids == nil {
		eventNames.ids = make(map[string]uint32)
	}
	id, ok := eventNames.ids[name]
	if !ok {
		id = uint32(len(eventNames.ids) + 1) // 0 is the zero Event
		eventNames.ids[name] = id
	}
	return id
}

func lookupEvent(name string) (uint32, bool) {
	eventNames.mu.Lock()
	defer eventNames.mu.Unlock()
	id, ok := eventNames.ids[name]
	return id, ok
}

// listener is one registration. Its identity is its pointer: the disposer
// removes exactly this registration, never another with the same function.
type listener struct {
	ctx    *Context
	fn     any // func(A) error, func(A) (R, error) or func(A, Next[R]) (R, error)
	global bool
}

// slot holds one event's listeners and observers in one root. Both lists are
// immutable slices replaced on write (copy-on-write), so a dispatch iterates a
// snapshot without holding any lock.
type slot struct {
	name      string
	listeners atomic.Pointer[[]*listener]
	observers atomic.Pointer[[]*observer]
}

// slot returns the slot of event id, or nil if nothing was ever registered.
func (r *rt) slot(id uint32) *slot {
	if s := r.slots.Load(); s != nil && int(id) < len(*s) {
		return (*s)[id]
	}
	return nil
}

// slotFor returns the slot of event id, creating it. Callers hold r.mu.
func (r *rt) slotFor(id uint32, name string) *slot {
	var cur []*slot
	if p := r.slots.Load(); p != nil {
		cur = *p
	}
	if int(id) < len(cur) && cur[id] != nil {
		return cur[id]
	}
	next := make([]*slot, max(len(cur), int(id)+1))
	copy(next, cur)
	s := &slot{name: name}
	next[id] = s
	r.slots.Store(&next)
	return s
}

func (r *rt) listen(ctx *Context, id uint32, name string, fn any, opts []ListenOption) (func(), error) {
	var o listenOpts
	for _, opt := range opts {
		opt(&o)
	}
	l := &listener{ctx: ctx, fn: fn, global: o.global}
	r.mu.Lock()
	s := r.slotFor(id, name)
	r.mu.Unlock()
	e, err := ctx.fiber.track(func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		removeFrom(&s.listeners, l)
		return nil
	}, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		insertInto(&s.listeners, l, o.prepend)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func() { _ = e.dispose() }, nil
}

// insertInto and removeFrom replace a copy-on-write list. Callers hold r.mu.
func insertInto[T any](list *atomic.Pointer[[]*T], x *T, prepend bool) {
	var cur []*T
	if p := list.Load(); p != nil {
		cur = *p
	}
	next := make([]*T, 0, len(cur)+1)
	if prepend {
		next = append(append(next, x), cur...)
	} else {
		next = append(append(next, cur...), x)
	}
	list.Store(&next)
}

func removeFrom[T any](list *atomic.Pointer[[]*T], x *T) bool {
	p := list.Load()
	if p == nil {
		return false
	}
	cur := *p
	for i, y := range cur {
		if y != x {
			continue
		}
		if len(cur) == 1 {
			list.Store(nil)
			return true
		}
		next := make([]*T, 0, len(cur)-1)
		next = append(append(next, cur[:i]...), cur[i+1:]...)
		list.Store(&next)
		return true
	}
	return false
}

func (r *rt) snapshot(id uint32) []*listener {
	if s := r.slot(id); s != nil {
		if p := s.listeners.Load(); p != nil {
			return *p
		}
	}
	return nil
}

// ListenerCount reports how many listeners are registered for the event
// name in c's root. Hosts and tests use it to check that plugins clean up.
func (c *Context) ListenerCount(name string) int {
	id, ok := lookupEvent(name)
	if !ok {
		return 0
	}
	return len(c.rt.snapshot(id))
}

// ListenOption adjusts a listener registration.
type ListenOption func(*listenOpts)

type listenOpts struct{ prepend, global bool }

// Prepend puts the listener in front of the existing ones.
func Prepend() ListenOption { return func(o *listenOpts) { o.prepend = true } }

// Global makes the listener ignore emit filters.
func Global() ListenOption { return func(o *listenOpts) { o.global = true } }

// Filter decides which listeners a filtered emit reaches, by their context.
type Filter interface{ Accept(listener *Context) bool }

// mismatch reports a listener registered under the same name with another
// signature (two packages declaring one event name with different types).
func mismatch(name string, fn any) error {
	return fmt.Errorf("runtime: listener of %q has signature %T, which does not match this dispatch", name, fn)
}

// ---- emit-mode events -------------------------------------------------------

// Event is an event whose listeners return only an error (emit, parallel).
// Declare it once, in the package that owns it:
//
//	var Saved = runtime.NewEvent[SavedArgs]("doc/saved")
type Event[A any] struct {
	name string
	id   uint32
}

// NewEvent declares an emit-mode event.
func NewEvent[A any](name string) Event[A] { return Event[A]{name, internEvent(name)} }

// Name returns the event name.
func (e Event[A]) Name() string { return e.name }

// On registers fn, owned by ctx's fiber. The returned dispose is idempotent.
func (e Event[A]) On(ctx *Context, fn func(A) error, opts ...ListenOption) (dispose func(), err error) {
	if fn == nil {
		return nil, fmt.Errorf("runtime: nil listener for %q", e.name)
	}
	return ctx.rt.listen(ctx, e.id, e.name, fn, opts)
}

// Once is On for a listener that disposes itself before its first call.
func (e Event[A]) Once(ctx *Context, fn func(A) error, opts ...ListenOption) (dispose func(), err error) {
	if fn == nil {
		return nil, fmt.Errorf("runtime: nil listener for %q", e.name)
	}
	var fired atomic.Bool
	var self func()
	var mu sync.Mutex
	mu.Lock()
	defer mu.Unlock()
	self, err = e.On(ctx, func(a A) error {
		if !fired.CompareAndSwap(false, true) {
			return nil
		}
		mu.Lock() // wait until On has returned self
		d := self
		mu.Unlock()
		d()
		return fn(a)
	}, opts...)
	return self, err
}

// Emit calls every listener in order. Listener errors and panics are isolated
// (logged, reported on ErrorEvent, the rest still run) and returned joined.
func (e Event[A]) Emit(ctx *Context, args A) error { return e.emit(ctx.rt, nil, args) }

// EmitTo is Emit restricted to listeners the filter accepts, plus global ones.
func (e Event[A]) EmitTo(ctx *Context, filter Filter, args A) error {
	return e.emit(ctx.rt, filter, args)
}

func (e Event[A]) emit(r *rt, filter Filter, args A) error {
	ls := r.snapshot(e.id)
	var errs error
	for i := 0; i < len(ls); {
		i, errs = e.run(r, filter, ls, i, args, errs)
	}
	if r.obs.count.Load() != 0 {
		r.observe(e.id, e.name, args)
	}
	return errs
}

// run calls ls[i:] in order and returns len(ls), or, after a listener (or
// the filter asked about it) panicked, the index of the next one: the caller
// resumes there. One deferred recover per dispatch instead of per listener.
func (e Event[A]) run(r *rt, filter Filter, ls []*listener, i int, args A, errs error) (next int, out error) {
	defer func() {
		if p := recover(); p != nil {
			err := recovered(p)
			r.listenerFailed(ls[next], e.name, err)
			next, out = next+1, joinErr(errs, err)
		}
	}()
	for next = i; next < len(ls); next++ {
		l := ls[next]
		if filter != nil && !l.global && !filter.Accept(l.ctx) {
			continue
		}
		fn, ok := l.fn.(func(A) error)
		if !ok {
			err := mismatch(e.name, l.fn)
			r.listenerFailed(l, e.name, err)
			errs = joinErr(errs, err)
			continue
		}
		if err := fn(args); err != nil {
			r.listenerFailed(l, e.name, err)
			errs = joinErr(errs, err)
		}
	}
	return next, errs
}

// call runs one listener with its own recover (Parallel).
func (e Event[A]) call(l *listener, args A) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
		}
	}()
	fn, ok := l.fn.(func(A) error)
	if !ok {
		return mismatch(e.name, l.fn)
	}
	return fn(args)
}

// Parallel runs every listener concurrently and joins their errors.
func (e Event[A]) Parallel(ctx *Context, args A) error {
	r := ctx.rt
	ls := r.snapshot(e.id)
	errs := make([]error, len(ls))
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Go(func() {
			if err := e.call(l, args); err != nil {
				r.listenerFailed(l, e.name, err)
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if r.obs.count.Load() != 0 {
		r.observe(e.id, e.name, args)
	}
	var joined error
	for _, err := range errs {
		if err != nil {
			joined = joinErr(joined, err)
		}
	}
	return joined
}

// Observe subscribes fn asynchronously (via the observation bus). The
// subscription is owned by ctx's fiber; fn runs on another goroutine, and a
// panic in it is recovered and logged.
func (e Event[A]) Observe(ctx *Context, fn func(A)) error {
	if fn == nil {
		return fmt.Errorf("runtime: nil observer for %q", e.name)
	}
	return ctx.rt.addObserver(ctx, e.id, e.name, func(n Note) {
		a, ok := n.Args.(A)
		if ok || n.Args == nil {
			fn(a)
		}
	})
}

// ---- hooks: serial and bail -------------------------------------------------

// Hook is an event whose listeners return a result (serial, bail).
type Hook[A any, R comparable] struct {
	name string
	id   uint32
}

// NewHook declares a result-returning event.
func NewHook[A any, R comparable](name string) Hook[A, R] {
	return Hook[A, R]{name, internEvent(name)}
}

// Name returns the hook name.
func (h Hook[A, R]) Name() string { return h.name }

// On registers fn, owned by ctx's fiber. The returned dispose is idempotent.
func (h Hook[A, R]) On(ctx *Context, fn func(A) (R, error), opts ...ListenOption) (dispose func(), err error) {
	if fn == nil {
		return nil, fmt.Errorf("runtime: nil listener for %q", h.name)
	}
	return ctx.rt.listen(ctx, h.id, h.name, fn, opts)
}

// Bail runs listeners in order; the first non-zero result or error wins.
// Errors are returned, not logged: they are the caller's to handle. Panics
// become *PanicError and are also logged and reported.
func (h Hook[A, R]) Bail(ctx *Context, args A) (R, error) {
	return h.serial(ctx.rt, nil, args)
}

// Serial is Bail that also stops (with stop's error) once stop is done.
func (h Hook[A, R]) Serial(ctx *Context, stop context.Context, args A) (R, error) {
	return h.serial(ctx.rt, stop, args)
}

func (h Hook[A, R]) serial(r *rt, stop context.Context, args A) (R, error) {
	var zero R
	for _, l := range r.snapshot(h.id) {
		if stop != nil {
			if err := stop.Err(); err != nil {
				return zero, err
			}
		}
		res, err := h.call(r, l, args)
		if err != nil || res != zero {
			return res, err
		}
	}
	return zero, nil
}

func (h Hook[A, R]) call(r *rt, l *listener, args A) (res R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
			r.listenerFailed(l, h.name, err)
		}
	}()
	fn, ok := l.fn.(func(A) (R, error))
	if !ok {
		return res, mismatch(h.name, l.fn)
	}
	return fn(args)
}

// ---- waterfall -------------------------------------------------------------

// Next runs the rest of a waterfall chain (or its fallback).
type Next[R any] func() (R, error)

// Waterfall is a middleware chain: the first listener that returns without
// calling next decides.
type Waterfall[A, R any] struct {
	name   string
	id     uint32
	chains *sync.Pool // of *chain[A, R], reused across runs
}

// NewWaterfall declares a middleware-chain event.
func NewWaterfall[A, R any](name string) Waterfall[A, R] {
	return Waterfall[A, R]{name, internEvent(name), &sync.Pool{New: func() any { return new(chain[A, R]) }}}
}

// Name returns the waterfall name.
func (w Waterfall[A, R]) Name() string { return w.name }

// On registers fn, owned by ctx's fiber. The returned dispose is idempotent.
func (w Waterfall[A, R]) On(ctx *Context, fn func(args A, next Next[R]) (R, error), opts ...ListenOption) (dispose func(), err error) {
	if fn == nil {
		return nil, fmt.Errorf("runtime: nil listener for %q", w.name)
	}
	return ctx.rt.listen(ctx, w.id, w.name, fn, opts)
}

// Run dispatches; with no listeners the result is fallback's (a nil fallback
// yields the zero R). Calling next twice makes the run fail with
// ErrNextCalledTwice; a panic anywhere in the chain becomes its error. next
// is valid only until Run returns.
func (w Waterfall[A, R]) Run(ctx *Context, args A, fallback func() (R, error)) (R, error) {
	var c *chain[A, R]
	if w.chains != nil {
		c = w.chains.Get().(*chain[A, R])
	} else {
		c = new(chain[A, R])
	}
	c.rt, c.name, c.ls, c.args, c.fallback = ctx.rt, w.name, ctx.rt.snapshot(w.id), args, fallback
	if len(c.ls) > 64 {
		c.more = make([]atomic.Bool, len(c.ls))
	}
	gen := c.gen.Load()
	res, err := c.run(0, gen)
	if err == nil && c.fault != nil {
		var zero R
		res, err = zero, c.fault
	}
	// Invalidate every next of this run, then recycle the chain.
	c.gen.Add(1)
	var zeroArgs A
	c.rt, c.ls, c.args, c.fallback, c.more, c.fault = nil, nil, zeroArgs, nil, nil, nil
	c.called.Store(0)
	if w.chains != nil {
		w.chains.Put(c)
	}
	return res, err
}

// errNextAfterReturn: a listener kept next and called it after Run returned.
var errNextAfterReturn = errors.New("runtime: next() called after the waterfall returned")

// chain is the state of one waterfall run, recycled through a pool; gen
// tells a run's next functions from a later run's. Only the small closure
// handed to each listener reached is allocated. called records which
// listeners already called next; fault records misuse (next twice) or a
// panic, so a listener that swallows next's error cannot hide it.
type chain[A, R any] struct {
	rt       *rt
	name     string
	ls       []*listener
	args     A
	fallback func() (R, error)
	gen      atomic.Uint64
	called   atomic.Uint64 // bit i: listener i called next
	more     []atomic.Bool // instead of called, for chains over 64 listeners
	fault    error
}

func (c *chain[A, R]) next(i int, gen uint64) (R, error) {
	if c.gen.Load() != gen {
		var zero R
		return zero, errNextAfterReturn
	}
	var twice bool
	if c.more != nil {
		twice = c.more[i].Swap(true)
	} else {
		bit := uint64(1) << i
		twice = c.called.Or(bit)&bit != 0
	}
	if twice {
		var zero R
		if c.fault == nil {
			c.fault = ErrNextCalledTwice
		}
		return zero, ErrNextCalledTwice
	}
	return c.run(i+1, gen)
}

func (c *chain[A, R]) run(i int, gen uint64) (res R, err error) {
	if i == len(c.ls) {
		if c.fallback == nil {
			return res, nil
		}
		defer func() {
			if p := recover(); p != nil {
				err = recovered(p)
				c.fault = err
				c.rt.logger.Error("waterfall fallback panicked", "event", c.name, "error", err)
			}
		}()
		return c.fallback()
	}
	l := c.ls[i]
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
			c.fault = err
			c.rt.listenerFailed(l, c.name, err)
		}
	}()
	fn, ok := l.fn.(func(A, Next[R]) (R, error))
	if !ok {
		return res, mismatch(c.name, l.fn)
	}
	return fn(c.args, func() (R, error) { return c.next(i, gen) })
}
