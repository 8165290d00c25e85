package runtime

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

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
// ErrNextCalledTwice. A panic anywhere in the chain unwinds it and becomes
// the run's *PanicError (logged and reported for a listener). next is valid
// only until Run returns.
func (w Waterfall[A, R]) Run(ctx *Context, args A, fallback func() (R, error)) (R, error) {
	return w.run(ctx.rt, nil, args, fallback)
}

// RunTo is Run through only the listeners the filter accepts, plus global
// ones; next skips the others.
func (w Waterfall[A, R]) RunTo(ctx *Context, filter Filter, args A, fallback func() (R, error)) (R, error) {
	return w.run(ctx.rt, filter, args, fallback)
}

func (w Waterfall[A, R]) run(r *rt, filter Filter, args A, fallback func() (R, error)) (R, error) {
	var c *chain[A, R]
	if w.chains != nil {
		c = w.chains.Get().(*chain[A, R])
	} else {
		c = new(chain[A, R])
	}
	ls := r.snapshot(w.id)
	c.rt, c.name, c.ls, c.filter, c.args, c.fallback = r, w.name, ls, filter, args, fallback
	c.called = slices.Grow(c.called[:0], len(ls))[:len(ls)]
	clear(c.called)
	res, err := c.start()
	if err == nil && c.fault != nil {
		var zero R
		res, err = zero, c.fault
	}
	// Invalidate every next of this run, drop what the run referenced, and
	// recycle the chain.
	c.gen.Add(1)
	var zeroArgs A
	c.ls, c.filter, c.args, c.fallback, c.fault = nil, nil, zeroArgs, nil, nil
	if w.chains != nil {
		w.chains.Put(c)
	}
	return res, err
}

// errNextAfterReturn: a listener kept next and called it after Run returned.
var errNextAfterReturn = errors.New("runtime: next() called after the waterfall returned")

// chain is the state of one waterfall run, recycled through a pool; gen
// tells a run's next functions from a later run's. Only the small closure
// handed to each listener reached is allocated. called[i] records that
// listener i called next; fault records misuse (next twice), so a listener
// that swallows next's error cannot hide it. A chain is used by
// one run at a time, and next calls are sequential, so only gen (read by a
// late next from any goroutine) is atomic.
type chain[A, R any] struct {
	rt       *rt
	name     string
	ls       []*listener
	filter   Filter
	args     A
	fallback func() (R, error)
	gen      atomic.Uint64
	called   []bool
	cur      int // index of the listener running now; len(ls) for the fallback
	fault    error
}

func (c *chain[A, R]) next(i int, gen uint64) (R, error) {
	var zero R
	if c.gen.Load() != gen {
		return zero, errNextAfterReturn
	}
	if c.called[i] {
		if c.fault == nil {
			c.fault = ErrNextCalledTwice
		}
		return zero, ErrNextCalledTwice
	}
	c.called[i] = true
	res, err := c.run(i+1, gen)
	c.cur = i // back in listener i
	return res, err
}

// start runs the chain with one recover for all of it: a panic, in a
// listener or in the fallback, unwinds the whole chain (like a throw in
// Cordis) and becomes the run's error. cur tells whose code panicked.
func (c *chain[A, R]) start() (res R, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero R
			res, err = zero, recovered(p)
			if c.cur < len(c.ls) {
				c.rt.listenerFailed(c.ls[c.cur], c.name, err)
			} else {
				c.rt.logger.Error("waterfall fallback panicked", "event", c.name, "error", err)
			}
		}
	}()
	return c.run(0, c.gen.Load())
}

func (c *chain[A, R]) run(i int, gen uint64) (R, error) {
	// Skip the listeners the filter rejects; cur is the one being asked, so
	// a panicking filter is blamed on it, as in Emit.
	for c.cur = i; c.cur < len(c.ls) && !c.ls[c.cur].reached(c.filter); c.cur++ {
	}
	i = c.cur
	if i == len(c.ls) {
		if c.fallback == nil {
			var zero R
			return zero, nil
		}
		return c.fallback()
	}
	l := c.ls[i]
	fn, ok := l.fn.(func(A, Next[R]) (R, error))
	if !ok {
		var zero R
		return zero, mismatch(c.name, l.fn)
	}
	return fn(c.args, func() (R, error) { return c.next(i, gen) })
}
