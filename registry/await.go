package registry

import (
	"context"
	"errors"
	"log/slog"
)

// ErrAbandoned is what Await returns when the call's context ends before
// the listeners it waits for return.
var ErrAbandoned = errors.New("the call's context ended before its listeners returned")

// Await runs dispatch, a dispatch of the listeners of the event named event
// on behalf of call, and returns what it returns, or ErrAbandoned as soon as
// ctx ends first: a listener cannot hold a call past the call's context. The
// registry awaits tools/pre-execute and tools/result this way, and the file
// tools their intents and fs/observed.
//
// Go cannot stop a goroutine, so an abandoned dispatch runs on until its
// listeners return, and what it returns is dropped. A warning naming the
// event, the tool and the call is logged when ctx ends while Await waits;
// not when ctx had already ended, since the listeners were then given no
// time to be late in. A ctx that cannot end (no Done channel) runs dispatch
// inline, with no goroutine.
func Await[T any](ctx context.Context, log *slog.Logger, event string, call *Call, dispatch func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return dispatch()
	}
	live := ctx.Err() == nil
	type outcome struct {
		v   T
		err error
	}
	returned := make(chan outcome, 1)
	go func() {
		v, err := dispatch()
		returned <- outcome{v, err}
	}()
	select {
	case o := <-returned:
		return o.v, o.err
	case <-ctx.Done():
		if live {
			log.Warn("listeners abandoned: the call's context ended before they returned",
				"event", event, "tool", call.Tool, "call", call.ID, "cause", context.Cause(ctx))
		}
		var zero T
		return zero, ErrAbandoned
	}
}
