package runtime

import (
	"fmt"
	"reflect"
	"slices"
)

// Plugin is the contract every plugin satisfies.
type Plugin interface {
	Name() string
	Apply(ctx *Context, config any) error
}

// Injector is implemented by plugins that need services; the fiber stays
// PENDING until all of them are provided by ACTIVE providers.
type Injector interface{ Inject() []ServiceRef }

// Configurable is implemented by plugins with a config struct; ConfigPrototype
// returns its zero value. The runtime derives a JSON Schema from it, fills
// defaults, validates, and hands Apply a value of that type.
type Configurable interface{ ConfigPrototype() any }

// PluginOption adjusts a plugin built by Func, Configured or Constructor.
type PluginOption func(*pluginMeta)

type pluginMeta struct{ inject []string }

// Inject declares the services the plugin needs, by their handles:
//
//	runtime.Inject(fs.Service, registry.Tools)
//
// A host that knows a service only by name at run time passes [Named].
func Inject(services ...ServiceRef) PluginOption {
	return func(m *pluginMeta) { m.inject = appendNames(m.inject, services) }
}

// appendNames adds the services' names; a nil ServiceRef adds "", which
// specOf refuses when the plugin is applied.
func appendNames(names []string, services []ServiceRef) []string {
	for _, s := range services {
		name := ""
		if s != nil {
			name = s.ServiceName()
		}
		names = append(names, name)
	}
	return names
}

// spec is a plugin normalized for the runtime: what every fiber of it needs.
type spec struct {
	name   string
	inject []string
	config *configType // nil: the config passes through unchanged
	apply  func(ctx *Context, config any) error
}

// builtin is the plugin made by Func, Configured and Constructor: its spec is
// computed once, so applying it costs no reflection.
type builtin struct{ s *spec }

var (
	_ Plugin       = builtin{}
	_ Injector     = builtin{}
	_ Configurable = builtin{}
)

func (b builtin) Name() string                         { return b.s.name }
func (b builtin) Apply(ctx *Context, config any) error { return b.s.apply(ctx, config) }
func (b builtin) Inject() []ServiceRef                 { return namedAll(b.s.inject) }

func (b builtin) ConfigPrototype() any {
	if b.s.config == nil {
		return nil
	}
	return reflect.Zero(b.s.config.typ).Interface()
}

func newBuiltin(name string, opts []PluginOption, config reflect.Type, apply func(*Context, any) error) Plugin {
	var m pluginMeta
	for _, opt := range opts {
		opt(&m)
	}
	s := &spec{name: name, inject: m.inject, apply: apply}
	if config != nil {
		s.config = configTypeOf(config)
	}
	return builtin{s}
}

// Func makes a plugin from a function without config.
func Func(name string, apply func(ctx *Context) error, opts ...PluginOption) Plugin {
	if apply == nil {
		return newBuiltin(name, opts, nil, nil)
	}
	return newBuiltin(name, opts, nil, func(ctx *Context, _ any) error { return apply(ctx) })
}

// Configured makes a plugin from a function taking a validated config of type C.
func Configured[C any](name string, apply func(ctx *Context, config C) error, opts ...PluginOption) Plugin {
	if apply == nil {
		return newBuiltin(name, opts, reflect.TypeFor[C](), nil)
	}
	return newBuiltin(name, opts, reflect.TypeFor[C](), func(ctx *Context, config any) error {
		c, _ := config.(C)
		return apply(ctx, c)
	})
}

// Constructor makes a plugin from a constructor; if T has Close() error, it is
// the teardown of the application.
func Constructor[C, T any](name string, newT func(ctx *Context, config C) (T, error), opts ...PluginOption) Plugin {
	if newT == nil {
		return newBuiltin(name, opts, reflect.TypeFor[C](), nil)
	}
	return newBuiltin(name, opts, reflect.TypeFor[C](), func(ctx *Context, config any) error {
		c, _ := config.(C)
		v, err := newT(ctx, c)
		if closer, ok := any(v).(interface{ Close() error }); ok && !isNil(v) {
			// Registered even when newT failed, so a half-built value is closed.
			if _, terr := ctx.fiber.track(closer.Close, nil); terr != nil {
				_ = runTeardown(closer.Close)
			}
		}
		return err
	})
}

func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Invalid:
		return true
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// specOf normalizes p, refusing nil plugins and plugins without an apply,
// and plugins whose Name, Inject or ConfigPrototype panics.
func specOf(p Plugin) (s *spec, err error) {
	defer func() {
		if v := recover(); v != nil {
			s, err = nil, fmt.Errorf("%w: %w", ErrInvalidPlugin, recovered(v))
		}
	}()
	if p == nil || isNil(p) {
		return nil, fmt.Errorf("%w: nil plugin", ErrInvalidPlugin)
	}
	if b, ok := p.(builtin); ok {
		if b.s.apply == nil {
			return nil, fmt.Errorf("%w: plugin %q has no apply function", ErrInvalidPlugin, b.s.name)
		}
		return b.s, b.s.checkInject()
	}
	s = &spec{name: p.Name(), apply: p.Apply}
	if i, ok := p.(Injector); ok {
		s.inject = appendNames(nil, i.Inject())
	}
	if c, ok := p.(Configurable); ok {
		if proto := c.ConfigPrototype(); proto != nil {
			s.config = configTypeOf(reflect.TypeOf(proto))
		}
	}
	if err := s.checkInject(); err != nil {
		return nil, err
	}
	return s, nil
}

// pluginKey identifies p in the registry, as Cordis identifies a plugin by its
// apply function: a plugin built by Func, Configured or Constructor by its
// apply, any other plugin by its value, or by its type (whose Apply method
// it runs) when the value is not comparable.
func pluginKey(p Plugin) any {
	switch p.(type) {
	case nil, builtin:
		return p
	}
	if reflect.ValueOf(p).Comparable() {
		return p
	}
	return reflect.TypeOf(p)
}

// checkInject refuses an inject without a name: a nil ServiceRef, Named(""),
// or a zero Service handle.
func (s *spec) checkInject() error {
	if slices.Contains(s.inject, "") {
		return fmt.Errorf("%w: plugin %q injects a service without a name", ErrInvalidPlugin, s.name)
	}
	return nil
}
