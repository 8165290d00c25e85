// Package runtime is a Cordis-style plugin runtime for Go. A plugin is
// applied to a [Context] and receives a child context of its own; everything
// it registers through that context (listeners, services, effects, child
// plugins) belongs to it and is torn down with it, newest first.
//
// # Writing a plugin
//
// The shortest plugin is a function:
//
//	var Hello = runtime.Func("hello", func(ctx *runtime.Context) error {
//		_, err := Greeted.On(ctx, func(name string) error {
//			ctx.Logger().Info("hello", "name", name) // logged with plugin=hello
//			return nil
//		})
//		return err
//	})
//
// A plugin with a config takes a struct. The runtime derives a JSON Schema
// from its tags, fills defaults and validates the config before apply runs; an
// invalid config names every violation and apply never runs:
//
//	type Config struct {
//		Greeting string `json:"greeting,omitempty" jsonschema:"default=hi"`
//	}
//
//	var Greeter = runtime.Configured("greeter",
//		func(ctx *runtime.Context, c Config) error { ... },
//		runtime.Inject(fs.Service)) // waits until some plugin provides fs.Service
//
// [Constructor] builds a value from the context and the config; if the value
// has Close() error, that is its teardown. Any type with Name and Apply
// methods is a plugin too, optionally an [Injector] and a [Configurable].
// Teardown of anything else goes through [Context.Effect]:
//
//	_, err := ctx.Effect(func() (func() error, error) {
//		stop := make(chan struct{})
//		go poll(stop)
//		return func() error { close(stop); return nil }, nil
//	})
//
// # Loading plugins
//
//	root := runtime.New()
//	defer root.Close()
//
//	fiber, err := root.Plugin(Greeter, map[string]any{"greeting": "hey"})
//	if err != nil {
//		// refused: nil or invalid plugin, closed root
//	}
//	if err := fiber.WaitActive(ctx); err != nil {
//		// the config was invalid, apply failed, or ctx ended while the
//		// fiber waited for services (a *NotActiveError names them)
//	}
//
// [Context.Plugins] lists the plugins applied anywhere under the root,
// [Context.Fibers] their fibers, and [Context.DisposePlugin] disposes every
// fiber of one plugin wherever it was plugged (Cordis's registry), which is
// how a host reloads a plugin.
//
// [Fiber.Wait] only waits for a transition in flight. Close logs, as a
// warning, every plugin still PENDING and what it waits for. [Context.Reset]
// disposes everything on the root as Close does but keeps the root usable,
// for hosts that reload their plugins.
//
// Each application is a [Fiber]. Its states are PENDING (waiting for injected
// services, or holding an invalid config), LOADING, ACTIVE, UNLOADING,
// DISPOSED, and FAILED (apply returned an error or panicked; sticky until
// [Fiber.Update] or [Fiber.Restart]). Every change is emitted on
// [StatusEvent]; failures go to [ErrorEvent] and to the log. An application
// that loses an injected service, or is disposed or restarted, while its
// apply runs is never reported ACTIVE: it goes from LOADING to UNLOADING.
//
// # Services
//
// A [Service] is a typed handle to a named value. A plugin that injects it
// stays PENDING until an ACTIVE plugin (or the host, on the root) provides it.
// It is torn down before its provider goes away, and applies again when a
// provider returns. [Service.Get] needs the inject, except for a service that
// the plugin itself, one of its ancestors, or the root provides.
// [Service.Lookup] is the optional lookup. [Context.Isolate] gives a service
// name a domain of its own below a context, so that two providers of it (two
// workspaces, two model backends) live under one root, each serving the
// plugins plugged below its own context; contexts isolated with one label
// share a domain. [Context.Intercept] adds a config layer for a service
// that a subtree of plugins inherits; the service merges the caller's layers
// into its own config with [ResolveConfig].
//
// # Events
//
// Events are typed values declared once by the package that owns them:
// [Event] (Emit, Parallel), [Hook] (Bail, Serial) and [Waterfall] (a
// middleware chain with next). Each mode has a form that takes a [Filter]
// (EmitTo, ParallelTo, BailTo, SerialTo, RunTo), reaching only the listeners
// whose context it accepts, plus global ones; [Service.Domain] is the filter
// of a service's isolation domain. Listeners run synchronously,
// with no lock held, on a snapshot of the listener list, and may emit,
// register and dispose freely. Their errors and panics never escape to the
// emitter. Emit-mode events are also delivered, in order, to asynchronous
// observers ([Event.Observe], [Context.ObserveAll], [Context.Flush]).
//
// # Concurrency
//
// Everything is safe for concurrent use. A fiber's transitions are
// serialized: one goroutine runs them while the others record what they want.
// Do not call Dispose, Update, Restart, Wait or WaitActive on a fiber from
// inside its own apply: that would wait for itself.
//
// A [Context] is not a [context.Context]: cancellation still travels in a
// context.Context argument.
package runtime
