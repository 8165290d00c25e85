package runtime

import (
	"context"
	"fmt"
)

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
	return h.serial(ctx.rt, nil, nil, args)
}

// BailTo is Bail restricted to listeners the filter accepts, plus global ones.
func (h Hook[A, R]) BailTo(ctx *Context, filter Filter, args A) (R, error) {
	return h.serial(ctx.rt, nil, filter, args)
}

// Serial is Bail that also stops (with stop's error) once stop is done.
func (h Hook[A, R]) Serial(ctx *Context, stop context.Context, args A) (R, error) {
	return h.serial(ctx.rt, stop, nil, args)
}

// SerialTo is Serial restricted to listeners the filter accepts, plus global ones.
func (h Hook[A, R]) SerialTo(ctx *Context, stop context.Context, filter Filter, args A) (R, error) {
	return h.serial(ctx.rt, stop, filter, args)
}

func (h Hook[A, R]) serial(r *rt, stop context.Context, filter Filter, args A) (R, error) {
	var zero R
	for _, l := range r.snapshot(h.id) {
		if stop != nil {
			if err := stop.Err(); err != nil {
				return zero, err
			}
		}
		res, err := h.call(r, filter, l, args)
		if err != nil || res != zero {
			return res, err
		}
	}
	return zero, nil
}

// call runs l unless filter rejects it, which yields the zero result. A
// panic in the filter counts as the listener's, as in Emit.
func (h Hook[A, R]) call(r *rt, filter Filter, l *listener, args A) (res R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
			r.listenerFailed(l, h.name, err)
		}
	}()
	if !l.reached(filter) {
		return res, nil
	}
	fn, ok := l.fn.(func(A) (R, error))
	if !ok {
		return res, mismatch(h.name, l.fn)
	}
	return fn(args)
}
