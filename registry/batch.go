package registry

import (
	"context"
	"sync"
	"time"
)

// ExecuteBatch runs one assistant message's calls: concurrency-safe calls in
// parallel (capped), exclusive ones alone; results in input order, exactly one
// per call even when ctx is cancelled.
//
// Calls are taken in order. An exclusive call waits for every running call,
// then runs alone. A concurrency-safe call joins the running pool once a slot
// is free (at most MaxParallel run at once); its mode is read just before it
// starts. The steps before the body (arguments, permission) run one call at a
// time in input order; only bodies overlap. tools/result is emitted in input
// order as results settle; the batch waits for its listeners no longer than
// ctx lasts (after that they get the rest in order, unawaited). Once ctx is
// done no further call starts: those get "tool call aborted before
// dispatch", and started ones are awaited.
func (r *Registry) ExecuteBatch(ctx context.Context, calls []*Call) []*Result {
	if ctx == nil {
		ctx = context.Background()
	}
	results := make([]*Result, len(calls))
	// The publisher gets each call and result through its own channel, not
	// from results, which the caller owns once the batch has returned.
	type outcome struct {
		call *Call // nil is &Call{}
		res  *Result
	}
	settled := make([]chan outcome, len(calls))
	for i := range settled {
		settled[i] = make(chan outcome, 1)
	}
	settle := func(i int, call *Call, start time.Time, res *Result) {
		res.Duration = time.Since(start)
		res.ctx = ctx
		results[i] = res
		settled[i] <- outcome{call, res}
	}

	published := make(chan struct{})
	go func() {
		defer close(published)
		for _, c := range settled {
			o := <-c
			if ctx.Err() == nil {
				r.publish(ctx, o.call, o.res)
				continue
			}
			// The batch no longer waits for the listeners, but they still
			// get every result, one at a time and in input order.
			r.emitted(o.res, r.emit(o.res))
		}
	}()

	slots := make(chan struct{}, r.maxParallel.Load())
	var running sync.WaitGroup
	for i, call := range calls {
		if call == nil {
			call = &Call{}
		}
		// A call starts (tools/start, Duration) when it no longer waits
		// for others: it counts in flight only while it runs.
		if ctx.Err() != nil {
			settle(i, call, r.begin(call), abortedBeforeDispatch(call))
			continue
		}
		if !r.concurrencySafe(call) {
			running.Wait()
			start := r.begin(call)
			settle(i, call, start, r.run(ctx, call))
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			settle(i, call, r.begin(call), abortedBeforeDispatch(call))
			continue
		}
		start := r.begin(call)
		e, res := r.prepare(ctx, call)
		if res != nil {
			<-slots
			settle(i, call, start, res)
			continue
		}
		running.Add(1)
		go func() {
			defer running.Done()
			res := r.dispatch(ctx, call, e)
			<-slots
			settle(i, call, start, res)
		}()
	}
	running.Wait()
	select {
	case <-published:
	case <-ctx.Done(): // the publisher has logged a listener it abandoned
	}
	return results
}
