package registry

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/gordis-run/gordis/internal/clip"
	"github.com/gordis-run/gordis/internal/schema"
)

// Execute runs one call through the whole pipeline; it never panics.
// tools/start fires first; the result's Duration counts from there to the
// end of step 5.
//
//  1. ctx already done: "tool call aborted before dispatch".
//  2. unknown tool (unavailable if it was registered and is gone).
//  3. arguments: empty means {}; they must be JSON and fit the schema.
//  4. tools/pre-execute: a listener may deny the call; if ctx ends first,
//     "tool call aborted before dispatch".
//  5. the body runs (its panic is a result; a success after ctx is done is
//     "tool call aborted"), then the value renders.
//  6. tools/result is emitted with the result, whatever it is; the call
//     waits for its listeners no longer than ctx lasts.
func (r *Registry) Execute(ctx context.Context, call *Call) *Result {
	if ctx == nil {
		ctx = context.Background()
	}
	if call == nil {
		call = &Call{}
	}
	start := r.begin(call)
	res := r.run(ctx, call)
	res.Duration = time.Since(start)
	res.ctx = ctx
	r.publish(ctx, call, res)
	return res
}

// begin emits tools/start for call and returns the time its Duration
// counts from. A failing listener is logged: the call goes on.
func (r *Registry) begin(call *Call) time.Time {
	if err := StartEvent.Emit(r.ctx, Start{CallID: call.ID, Tool: call.Tool}); err != nil {
		r.ctx.Logger().Warn("tools/start listener failed", "tool", call.Tool, "call", call.ID, "err", err)
	}
	return time.Now()
}

func (r *Registry) run(ctx context.Context, call *Call) *Result {
	e, res := r.prepare(ctx, call)
	if res != nil {
		return res
	}
	return r.dispatch(ctx, call, e)
}

// prepare runs the steps before the body. It returns the tool, or the
// result that ends the call.
func (r *Registry) prepare(ctx context.Context, call *Call) (*entry, *Result) {
	if ctx.Err() != nil {
		return nil, abortedBeforeDispatch(call)
	}
	e, retired := r.lookup(call.Tool)
	if e == nil {
		if retired {
			return nil, unavailable(call, nil)
		}
		return nil, failure(call, fmt.Sprintf("unknown tool %q", call.Tool), NameUnknown, CodeUnknownTool)
	}
	normalizeArgs(call)
	call.decoded = decoded{}
	if e.decode != nil {
		v, err := decodeArgs(call, e)
		if err != nil {
			return nil, fromError(call, err)
		}
		call.decoded = decoded{from: call.Args, value: v}
	} else if err := e.args.Validate(call.Args); err != nil {
		return nil, fromError(call, argsError(err))
	}
	d, err := r.permit(ctx, &Request{Call: call, Traits: e.Traits, ctx: ctx})
	switch {
	case errors.Is(err, ErrAbandoned):
		return nil, abortedBeforeDispatch(call)
	case err != nil: // a broken permission plugin denies: fail closed
		return nil, failure(call, "permission check failed: "+err.Error(), NameDenied, CodeDenied)
	case d.Deny:
		return nil, failure(call, cmp.Or(d.Reason, msgDenied), NameDenied, CodeDenied)
	}
	return e, nil
}

// inPlaceMin is the size above which a handed-over string is decoded in
// place: a smaller one costs microseconds to copy, and stays whole in Args.
const inPlaceMin = 64 << 10

// decodeArgs validates and decodes the arguments of a Define tool; for a
// call that hands them over, it decodes long strings into them and replaces
// Args with a copy in which those are cut (see Call.HandOverArgs).
func decodeArgs(call *Call, e *entry) (any, error) {
	var inPlace func(string, int) bool
	if call.HandOverArgs {
		inPlace = func(name string, size int) bool {
			return size > inPlaceMin && !slices.Contains(e.Traits.Paths, name)
		}
	}
	v, spans, err := e.decode(call.Args, inPlace)
	if len(spans) > 0 {
		call.Args = cutArgs(call.Args, spans)
	}
	return v, err
}

// cutArgs is raw with the string literals at spans, which no longer hold
// JSON, replaced by their values cut as clip.String cuts them.
func cutArgs(raw []byte, spans []schema.Span) json.RawMessage {
	var out []byte
	prev := 0
	for _, sp := range spans {
		lit, _ := json.Marshal(clip.String(sp.Value)) // a string always has a JSON form
		out = append(append(out, raw[prev:sp.Start]...), lit...)
		prev = sp.End
	}
	return append(out, raw[prev:]...)
}

func normalizeArgs(call *Call) {
	if len(call.Args) == 0 {
		call.Args = json.RawMessage(`{}`)
	}
}

func allow() (Decision, error) { return Decision{}, nil }

// permit asks the tools/pre-execute chain; Run already turns a listener's
// panic into its error. A listener cannot hold the call past its context
// (Await): the call then returns "tool call aborted before dispatch" and
// the late decision is dropped.
func (r *Registry) permit(ctx context.Context, req *Request) (Decision, error) {
	return Await(ctx, r.ctx.Logger(), PreExecute.Name(), req.Call, func() (Decision, error) {
		return PreExecute.Run(r.ctx, req, allow)
	})
}

// dispatch runs the body and renders its value.
func (r *Registry) dispatch(ctx context.Context, call *Call, e *entry) *Result {
	if ctx.Err() != nil {
		return abortedBeforeDispatch(call)
	}
	value, err := r.body(ctx, call, e)
	if err != nil {
		// Also after cancellation: the body's own error says more.
		return fromError(call, err)
	}
	if ctx.Err() != nil {
		// The body ignored cancellation and succeeded; its effects may have
		// landed, but the caller has moved on.
		return failure(call, msgAborted, NameAbort, CodeAborted)
	}
	text, err := r.render(call, e, value)
	if err != nil {
		return fromError(call, err)
	}
	return &Result{CallID: call.ID, Tool: call.Tool, Text: text, Value: value}
}

func (r *Registry) body(ctx context.Context, call *Call, e *entry) (value any, err error) {
	defer r.recoverInto(call, &err)
	return e.Execute(ctx, call)
}

func (r *Registry) render(call *Call, e *entry, value any) (text string, err error) {
	defer r.recoverInto(call, &err)
	if e.Render == nil {
		return renderDefault(value), nil
	}
	return e.Render(value), nil
}

// recoverInto is deferred around tool code: a panic becomes *err.
func (r *Registry) recoverInto(call *Call, err *error) {
	if p := recover(); p != nil {
		r.ctx.Logger().Error("tool panicked", "tool", call.Tool, "call", call.ID, "panic", p, "stack", string(debug.Stack()))
		*err = &panicError{tool: call.Tool, value: p}
	}
}

func renderDefault(value any) string {
	switch v := value.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Sprint(value)
	}
	return string(b)
}

// publish emits tools/result and waits for the listeners while ctx lasts
// (Await): the result is fixed, so neither a failing listener nor an
// abandoned one changes it.
func (r *Registry) publish(ctx context.Context, call *Call, res *Result) {
	_, err := Await(ctx, r.ctx.Logger(), ResultEvent.Name(), call, func() (struct{}, error) {
		return struct{}{}, r.emit(res)
	})
	r.emitted(res, err)
}

func (r *Registry) emit(res *Result) error { return ResultEvent.Emit(r.ctx, res) }

// emitted logs a failing tools/result listener; Await has logged an
// abandoned one.
func (r *Registry) emitted(res *Result, err error) {
	if err != nil && !errors.Is(err, ErrAbandoned) {
		r.ctx.Logger().Warn("tools/result listener failed", "tool", res.Tool, "call", res.CallID, "err", err)
	}
}

// concurrencySafe is the call's scheduling mode: only a classifier that
// exists, does not panic and says true makes it parallel.
func (r *Registry) concurrencySafe(call *Call) (safe bool) {
	e, _ := r.lookup(call.Tool)
	if e == nil || e.ConcurrencySafe == nil {
		return false
	}
	normalizeArgs(call)
	defer func() {
		if recover() != nil {
			safe = false
		}
	}()
	return e.ConcurrencySafe(call.Args)
}
