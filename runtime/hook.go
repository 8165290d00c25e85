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
