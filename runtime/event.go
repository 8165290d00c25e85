package runtime

import (
	"fmt"
	"sync"
	"sync/atomic"
)

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
	if to, ok := r.watching(e.id); ok {
		r.observe(e.name, args, to)
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
		if !l.reached(filter) {
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

// call runs one listener, unless filter rejects it, with its own recover
// (Parallel).
func (e Event[A]) call(filter Filter, l *listener, args A) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
		}
	}()
	if !l.reached(filter) {
		return nil
	}
	fn, ok := l.fn.(func(A) error)
	if !ok {
		return mismatch(e.name, l.fn)
	}
	return fn(args)
}

// Parallel runs every listener concurrently and joins their errors.
func (e Event[A]) Parallel(ctx *Context, args A) error { return e.parallel(ctx.rt, nil, args) }

// ParallelTo is Parallel restricted to listeners the filter accepts, plus
// global ones. The filter runs on each listener's goroutine.
func (e Event[A]) ParallelTo(ctx *Context, filter Filter, args A) error {
	return e.parallel(ctx.rt, filter, args)
}

func (e Event[A]) parallel(r *rt, filter Filter, args A) error {
	ls := r.snapshot(e.id)
	errs := make([]error, len(ls))
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Go(func() {
			if err := e.call(filter, l, args); err != nil {
				r.listenerFailed(l, e.name, err)
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if to, ok := r.watching(e.id); ok {
		r.observe(e.name, args, to)
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
// subscription is owned by ctx's fiber; fn runs on another goroutine, about
// a millisecond after the emit or at the next Flush, and a panic in it is
// recovered and logged.
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
