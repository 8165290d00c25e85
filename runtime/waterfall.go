package runtime

import (
	"errors"
	"fmt"
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
