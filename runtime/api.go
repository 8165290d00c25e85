// Package runtime is a Cordis-style plugin runtime for Go.
//
// API CONTRACT STUB: every exported name below is the agreed public API that
// other packages compile against. The runtime implementer replaces the bodies
// (and may split this file), keeping the exported signatures.
package runtime

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// ---- errors -------------------------------------------------------------

var (
	// ErrInactive: registering a listener, effect, service or plugin on a disposed context.
	ErrInactive = errors.New("runtime: cannot create effect on inactive context")
	// ErrInvalidPlugin: Plugin(nil) or a plugin without an apply.
	ErrInvalidPlugin = errors.New("runtime: invalid plugin")
	// ErrNextCalledTwice: a waterfall listener called next more than once.
	ErrNextCalledTwice = errors.New("runtime: next() called multiple times")
)

// ---- context --------------------------------------------------------------

// Context is what a plugin receives: its view of the runtime, owning its
// listeners, services, child plugins and effects. Not a context.Context.
type Context struct{ _ [0]func() }

// Option configures New.
type Option func(*options)

type options struct{ logger *slog.Logger }

// WithLogger sets the root logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// New returns a root context. Close it to dispose every plugin and drain observers.
func New(opts ...Option) *Context { panic("unimplemented") }

// Plugin applies p under c with config and returns its fiber at once. The error
// is non-nil only when the plugin is refused (nil/invalid plugin, inactive
// context); config and apply failures are reported by Fiber.Wait and Fiber.Err.
func (c *Context) Plugin(p Plugin, config any) (*Fiber, error) { panic("unimplemented") }

// Effect runs setup now and owns its teardown: it runs when the fiber that owns
// c is disposed (newest first) or when the returned dispose is called (idempotent).
func (c *Context) Effect(setup func() (teardown func() error, err error)) (dispose func() error, err error) {
	panic("unimplemented")
}

// Fiber is the application that owns c (the root fiber on the root context).
func (c *Context) Fiber() *Fiber { panic("unimplemented") }

// Root returns the root context.
func (c *Context) Root() *Context { panic("unimplemented") }

// Logger returns a logger that names the fiber ("plugin" attribute).
func (c *Context) Logger() *slog.Logger { panic("unimplemented") }

// Extend returns a context sharing c's fiber that carries key=value (Cordis
// ctx.extend); listeners registered on it are seen by filters with that value.
func (c *Context) Extend(key, value any) *Context { panic("unimplemented") }

// Value returns the value Extend attached for key, or nil.
func (c *Context) Value(key any) any { panic("unimplemented") }

// OnUpdate lets the current application accept a new config in place: Update
// validates the config and calls fn instead of restarting; an error vetoes it.
func (c *Context) OnUpdate(fn func(config any) error) error { panic("unimplemented") }

// ObserveAll subscribes fn, asynchronously, to every emit-mode event.
func (c *Context) ObserveAll(fn func(Note)) error { panic("unimplemented") }

// Flush waits until every observation published so far has been delivered.
func (c *Context) Flush() { panic("unimplemented") }

// Close disposes everything registered on the root, then flushes observers.
// Only meaningful on the root context.
func (c *Context) Close() error { panic("unimplemented") }

// Note is one asynchronous observation of an emitted event.
type Note struct {
	Event string
	Args  any
	Time  time.Time
}

// ---- plugins --------------------------------------------------------------

// Plugin is the contract every plugin satisfies.
type Plugin interface {
	Name() string
	Apply(ctx *Context, config any) error
}

// Injector is implemented by plugins that need services; the fiber stays
// PENDING until all of them are provided by ACTIVE providers.
type Injector interface{ Inject() []string }

// Configurable is implemented by plugins with a config struct; ConfigPrototype
// returns its zero value. The runtime derives a JSON Schema from it, fills
// defaults, validates, and hands Apply a value of that type.
type Configurable interface{ ConfigPrototype() any }

// PluginOption adjusts a plugin built by Func, Configured or Constructor.
type PluginOption func(*pluginMeta)

type pluginMeta struct{ inject []string }

// Inject names the services the plugin needs.
func Inject(services ...string) PluginOption {
	return func(m *pluginMeta) { m.inject = append(m.inject, services...) }
}

// Func makes a plugin from a function without config.
func Func(name string, apply func(ctx *Context) error, opts ...PluginOption) Plugin {
	panic("unimplemented")
}

// Configured makes a plugin from a function taking a validated config of type C.
func Configured[C any](name string, apply func(ctx *Context, config C) error, opts ...PluginOption) Plugin {
	panic("unimplemented")
}

// Constructor makes a plugin from a constructor; if T has Close() error, it is
// the teardown of the application.
func Constructor[C, T any](name string, newT func(ctx *Context, config C) (T, error), opts ...PluginOption) Plugin {
	panic("unimplemented")
}

// ---- fibers -----------------------------------------------------------------

// State is a fiber's lifecycle state.
type State int32

const (
	Pending State = iota
	Loading
	Active
	Unloading
	Disposed
	Failed
)

func (s State) String() string { panic("unimplemented") }

// Fiber is one application of a plugin.
type Fiber struct{ _ [0]func() }

func (f *Fiber) Name() string      { panic("unimplemented") }
func (f *Fiber) ID() uint64        { panic("unimplemented") }
func (f *Fiber) State() State      { panic("unimplemented") }
func (f *Fiber) Context() *Context { panic("unimplemented") }
func (f *Fiber) Config() any       { panic("unimplemented") }
func (f *Fiber) Err() error        { panic("unimplemented") }

// Wait blocks until no transition is in flight and returns the fiber's error
// (config or apply), if any.
func (f *Fiber) Wait() error { panic("unimplemented") }

// Dispose tears the fiber down (newest first, best effort) and returns the
// collected teardown errors. Idempotent.
func (f *Fiber) Dispose() error { panic("unimplemented") }

// Update re-applies the fiber with a new config (or hands it to OnUpdate).
func (f *Fiber) Update(config any) error { panic("unimplemented") }

// Restart tears down and re-applies with the current config.
func (f *Fiber) Restart() error { panic("unimplemented") }

// StatusChange is emitted on StatusEvent for every fiber state change.
type StatusChange struct {
	Fiber    *Fiber
	From, To State
}

// ErrorReport is emitted on ErrorEvent when a plugin or listener fails.
type ErrorReport struct {
	Fiber *Fiber // the fiber whose code failed
	Event string // the event being dispatched, "" for apply/teardown
	Err   error
}

var (
	StatusEvent = NewEvent[StatusChange]("internal/status")
	ErrorEvent  = NewEvent[ErrorReport]("internal/error")
)

// ---- services -------------------------------------------------------------

// Service is a typed, named service handle, declared once by its owner package.
type Service[T any] struct{ name string }

func NewService[T any](name string) Service[T] { return Service[T]{name} }

func (s Service[T]) Name() string { return s.name }

// Provide registers value as the service, owned by ctx's fiber.
func (s Service[T]) Provide(ctx *Context, value T) error { panic("unimplemented") }

// Set replaces the value in place; dependents are not restarted.
func (s Service[T]) Set(ctx *Context, value T) error { panic("unimplemented") }

// Get returns the service for a context that injects it (or whose fiber or an
// ancestor provides it, or when it is provided on the root).
func (s Service[T]) Get(ctx *Context) (T, error) { panic("unimplemented") }

// Lookup is the optional lookup: no inject needed, reports absence.
func (s Service[T]) Lookup(ctx *Context) (T, bool) { panic("unimplemented") }

// ---- events ---------------------------------------------------------------

// ListenOption adjusts a listener registration.
type ListenOption func(*listenOpts)

type listenOpts struct{ prepend, global bool }

// Prepend puts the listener in front of the existing ones.
func Prepend() ListenOption { return func(o *listenOpts) { o.prepend = true } }

// Global makes the listener ignore emit filters.
func Global() ListenOption { return func(o *listenOpts) { o.global = true } }

// Filter decides which listeners a filtered emit reaches, by their context.
type Filter interface{ Accept(listener *Context) bool }

// Event is an event whose listeners return only an error (emit, parallel).
type Event[A any] struct{ name string }

func NewEvent[A any](name string) Event[A] { return Event[A]{name} }

func (e Event[A]) Name() string { return e.name }

func (e Event[A]) On(ctx *Context, fn func(A) error, opts ...ListenOption) (dispose func(), err error) {
	panic("unimplemented")
}
func (e Event[A]) Once(ctx *Context, fn func(A) error, opts ...ListenOption) (dispose func(), err error) {
	panic("unimplemented")
}

// Emit calls every listener in order. Listener errors and panics are isolated
// (logged, reported on ErrorEvent, the rest still run) and returned joined.
func (e Event[A]) Emit(ctx *Context, args A) error { panic("unimplemented") }

// EmitTo is Emit restricted to listeners the filter accepts, plus global ones.
func (e Event[A]) EmitTo(ctx *Context, filter Filter, args A) error { panic("unimplemented") }

// Parallel runs every listener concurrently and joins their errors.
func (e Event[A]) Parallel(ctx *Context, args A) error { panic("unimplemented") }

// Observe subscribes fn asynchronously (via the observation bus).
func (e Event[A]) Observe(ctx *Context, fn func(A)) error { panic("unimplemented") }

// Hook is an event whose listeners return a result (serial, bail).
type Hook[A any, R comparable] struct{ name string }

func NewHook[A any, R comparable](name string) Hook[A, R] { return Hook[A, R]{name} }

func (h Hook[A, R]) Name() string { return h.name }

func (h Hook[A, R]) On(ctx *Context, fn func(A) (R, error), opts ...ListenOption) (dispose func(), err error) {
	panic("unimplemented")
}

// Bail runs listeners in order; the first non-zero result or error wins.
func (h Hook[A, R]) Bail(ctx *Context, args A) (R, error) { panic("unimplemented") }

// Serial is Bail that also stops (with stop's error) once stop is done.
func (h Hook[A, R]) Serial(ctx *Context, stop context.Context, args A) (R, error) {
	panic("unimplemented")
}

// Next runs the rest of a waterfall chain (or its fallback).
type Next[R any] func() (R, error)

// Waterfall is a middleware chain: the first listener that returns without
// calling next decides.
type Waterfall[A, R any] struct{ name string }

func NewWaterfall[A, R any](name string) Waterfall[A, R] { return Waterfall[A, R]{name} }

func (w Waterfall[A, R]) Name() string { return w.name }

func (w Waterfall[A, R]) On(ctx *Context, fn func(args A, next Next[R]) (R, error), opts ...ListenOption) (dispose func(), err error) {
	panic("unimplemented")
}

// Run dispatches; with no listeners the result is fallback's.
func (w Waterfall[A, R]) Run(ctx *Context, args A, fallback func() (R, error)) (R, error) {
	panic("unimplemented")
}
