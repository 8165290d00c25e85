package registry

import (
	"context"
	"sync"
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
// order as results settle. Once ctx is done no further call starts: those get
// "tool call aborted before dispatch", and started ones are awaited.
func (r *Registry) ExecuteBatch(ctx context.Context, calls []*Call) []*Result {
	if ctx == nil {
		ctx = context.Background()
	}
	results := make([]*Result, len(calls))
	settled := make([]chan struct{}, len(calls))
	for i := range settled {
		settled[i] = make(chan struct{})
	}
	settle := func(i int, res *Result) {
		results[i] = res
		close(settled[i])
	}

	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := range calls {
			<-settled[i]
			r.publish(results[i])
		}
	}()

	slots := make(chan struct{}, r.maxParallel)
	var running sync.WaitGroup
	for i, call := range calls {
		if call == nil {
			call = &Call{}
		}
		if ctx.Err() != nil {
			settle(i, abortedBeforeDispatch(call))
			continue
		}
		if !r.concurrencySafe(call) {
			running.Wait()
			settle(i, r.run(ctx, call))
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			settle(i, abortedBeforeDispatch(call))
			continue
		}
		e, res := r.prepare(ctx, call)
		if res != nil {
			<-slots
			settle(i, res)
			continue
		}
		running.Add(1)
		go func() {
			defer running.Done()
			res := r.dispatch(ctx, call, e)
			<-slots
			settle(i, res)
		}()
	}
	running.Wait()
	<-published
	return results
}
