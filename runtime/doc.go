// Package runtime is a Cordis-style plugin runtime for Go: plugins are
// applied to a context, receive their own child context, and everything they
// register through it (listeners, services, effects, child plugins) is torn
// down with them, newest first.
//
// # Writing a plugin
//
// The shortest plugin is a function:
//
//	var Hello = runtime.Func("hello", func(ctx *runtime.Context) error {
//		_, err := Greeted.On(ctx, func(name string) error {
//			ctx.Logger().Info("hello", "name", name)
//			return nil
//		})
//		return err
//	})
//
// A plugin with configuration takes a struct; its JSON Schema is derived from
// the struct tags, defaults are filled and the config is validated before
// apply runs (an invalid config names every violation):
//
//	type Config struct {
//		Greeting string `json:"greeting,omitempty" jsonschema:"default=hi"`
//	}
//	var Greeter = runtime.Configured("greeter", func(ctx *runtime.Context, c Config) error { ... })
//
// Constructor builds a value from the context and config; if it has
// Close() error, that is the teardown. Any type with Name and Apply methods
// is a plugin too; it may add Inject() []string (Injector) and
// ConfigPrototype() any (Configurable).
//
// # Loading plugins
//
//	root := runtime.New()
//	defer root.Close()
//	fiber, err := root.Plugin(Greeter, map[string]any{"greeting": "hey"})
//	if err != nil { ... }            // refused: nil plugin, closed root
//	if err := fiber.Wait(); err != nil { ... } // config or apply error
//
// Each application is a [Fiber] with a lifecycle: PENDING (waiting for
// injected services, or holding an invalid config), LOADING, ACTIVE,
// UNLOADING, DISPOSED, and FAILED (apply returned an error or panicked;
// sticky until Update or Restart). Every change is emitted on [StatusEvent];
// failures on [ErrorEvent] and in the log (attribute plugin=<name>).
//
// # Services
//
// A [Service] is a typed, named value. A plugin that lists it with [Inject]
// stays PENDING until an ACTIVE plugin (or the host, on the root) provides
// it, is torn down when the provider goes away, and applies again when a
// provider returns. Get needs an inject, except for services provided by the
// plugin itself, an ancestor, or the root; Lookup is the optional lookup.
//
// # Events
//
// Events are declared once as typed values: [Event] (Emit, EmitTo with a
// [Filter], Parallel), [Hook] (Bail, Serial) and [Waterfall] (a middleware
// chain with next). Listeners run synchronously with no lock held; their
// errors and panics never escape to the emitter. Emit-mode events are also
// published on an asynchronous observation bus ([Event.Observe],
// [Context.ObserveAll], [Context.Flush]).
//
// A [Context] is not a [context.Context]: cancellation still travels in a
// context.Context argument.
package runtime
