package runtime

import (
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
)

// rt is the state shared by every context of one root.
type rt struct {
	logger *slog.Logger
	root   *Context
	nextID atomic.Uint64

	mu    sync.Mutex // serializes writes to slots and listener/observer lists
	slots atomic.Pointer[[]*slot]

	svcMu      sync.RWMutex
	services   map[serviceKey]*record
	dependents map[serviceKey][]*Fiber // fibers by injected service
	realms     map[realmKey]*isolation // the domains of Isolate labels

	obs observation

	plugins plugins
}

// Context is what a plugin receives: its view of the runtime, owning its
// listeners, services, child plugins and effects. Not a context.Context.
type Context struct {
	rt     *rt
	fiber  *Fiber
	parent *Context // the context this one extends or was plugged into
	key    any
	value  any
	// isolating is the nearest context at or above this one made by
	// Isolate, so that resolving a service skips the plain ones;
	// intercepting is the same for Intercept.
	isolating    *Context
	intercepting *Context
}

// Option configures New.
type Option func(*options)

type options struct{ logger *slog.Logger }

// WithLogger sets the root logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// New returns a root context. Close it to dispose every plugin and drain observers.
func New(opts ...Option) *Context {
	o := options{logger: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	r := &rt{
		logger:     o.logger,
		services:   make(map[serviceKey]*record),
		dependents: make(map[serviceKey][]*Fiber),
	}
	r.initObservation()
	root := &Fiber{rt: r, name: "root"}
	root.state.Store(int32(Active))
	root.ctx = &Context{rt: r, fiber: root}
	r.root = root.ctx
	return root.ctx
}

// Fiber is the application that owns c (the root fiber on the root context).
func (c *Context) Fiber() *Fiber { return c.fiber }

// Root returns the root context.
func (c *Context) Root() *Context { return c.rt.root }

// Extend returns a context sharing c's fiber that carries key=value (Cordis
// ctx.extend); listeners registered on it are seen by filters with that value.
// Like context.WithValue, it panics if key is nil or not comparable.
func (c *Context) Extend(key, value any) *Context {
	if key == nil || !reflect.TypeOf(key).Comparable() {
		panic("runtime: Extend key must be non-nil and comparable")
	}
	return &Context{rt: c.rt, fiber: c.fiber, parent: c, key: key, value: value,
		isolating: c.isolating, intercepting: c.intercepting}
}

// Value returns the value Extend attached for key, or nil. Values are
// inherited: a plugin's context sees those of the context it was plugged into.
func (c *Context) Value(key any) any {
	for x := c; x != nil; x = x.parent {
		if x.key == key {
			return x.value
		}
	}
	return nil
}

// Effect runs setup now and owns its teardown: it runs when the fiber that owns
// c is disposed (newest first) or when the returned dispose is called (idempotent).
// If setup fails it returns the error (after running the teardown it may have
// returned); a panic in setup becomes a *PanicError.
func (c *Context) Effect(setup func() (teardown func() error, err error)) (dispose func() error, err error) {
	if setup == nil {
		return nil, errors.New("runtime: nil effect setup")
	}
	f := c.fiber
	if !f.accepting() {
		return nil, ErrInactive
	}
	teardown, err := runSetup(setup)
	if err != nil {
		if teardown != nil {
			_ = runTeardown(teardown)
		}
		return nil, err
	}
	if teardown == nil {
		teardown = func() error { return nil }
	}
	e, err := f.track(teardown, nil)
	if err != nil {
		_ = runTeardown(teardown)
		return nil, err
	}
	return e.dispose, nil
}

func runSetup(setup func() (func() error, error)) (teardown func() error, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
		}
	}()
	return setup()
}

func runTeardown(teardown func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
		}
	}()
	return teardown()
}

// OnUpdate lets the current application accept a new config in place: Update
// validates the config and calls fn instead of restarting; an error vetoes it.
// It lasts until the application is torn down.
func (c *Context) OnUpdate(fn func(config any) error) error {
	if fn == nil {
		return errors.New("runtime: nil OnUpdate handler")
	}
	f := c.fiber
	_, err := f.track(func() error {
		f.mu.Lock()
		f.onUpdate = nil
		f.mu.Unlock()
		return nil
	}, func() error { f.onUpdate = fn; return nil })
	return err
}

// Close disposes everything registered on the root, then flushes observers.
// After Close, registering on any context of this root fails with ErrInactive;
// emitting still works. Only meaningful on the root context.
func (c *Context) Close() error {
	if c.fiber != c.rt.root.fiber {
		return errors.New("runtime: Close called on a plugin context; dispose its fiber instead")
	}
	c.rt.warnPending()
	err := c.fiber.Dispose()
	c.Flush()
	return err
}

// Reset disposes everything registered on the root, as Close does (plugins,
// listeners, services and effects, newest first, warning about plugins still
// pending, then flushing observers), but leaves the root usable: plugins,
// listeners and services can be registered again, and Close is still final.
// It returns the collected teardown errors; registrations made while it runs
// fail with ErrInactive. After Close it returns ErrInactive. Only meaningful
// on the root context.
func (c *Context) Reset() error {
	f := c.fiber
	if f != c.rt.root.fiber {
		return errors.New("runtime: Reset called on a plugin context; restart its fiber instead")
	}
	f.mu.Lock()
	closed := f.disposing
	f.mu.Unlock()
	if closed {
		return ErrInactive
	}
	c.rt.warnPending()
	err := f.teardownAll()
	c.Flush()
	return err
}

// warnPending logs every plugin that is PENDING when the root disposes it,
// with the services it waits for or its invalid config: a plugin that never
// got what it needs is reported rather than disposed in silence.
func (r *rt) warnPending() {
	for _, f := range r.root.fiber.descendants(nil) {
		f.mu.Lock()
		pending, err := f.State() == Pending, f.err
		var missing []string
		if pending && err == nil {
			missing = r.missing(f.inject)
		}
		f.mu.Unlock()
		switch {
		case !pending:
		case err != nil:
			f.logger().Warn("plugin still pending", "error", err)
		default:
			f.logger().Warn("plugin still pending", "missing", missing)
		}
	}
}

// report emits an ErrorReport, except for failures of ErrorEvent's own
// listeners, which are only logged (no recursion).
func (r *rt) report(f *Fiber, event string, err error) {
	if event == ErrorEvent.name {
		return
	}
	_ = ErrorEvent.Emit(r.root, ErrorReport{Fiber: f, Event: event, Err: err})
}

func (r *rt) listenerFailed(l *listener, event string, err error) {
	l.ctx.Logger().Error("listener failed", "event", event, "error", err)
	r.report(l.ctx.fiber, event, err)
}
