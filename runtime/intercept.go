package runtime

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
)

// interceptKey is the context value under which Intercept records a layer.
type interceptKey struct{ name string }

// layer is one Intercept: the config as JSON, taken when Intercept is
// called, so that later changes to the value do not leak in.
type layer struct {
	raw []byte
	err error                       // the config could not be marshalled; ResolveConfig reports it
	log atomic.Pointer[slog.Logger] // Logger's result for a logger layer, made once
}

// Intercept returns a context, sharing c's fiber, that adds config as a
// layer of the config of the service name for everything done from it:
// calls made with it, and the plugins plugged under it (Cordis's
// ctx.intercept). The service reads the layers with [ResolveConfig], so one
// subtree of plugins gets other settings without a second provider. config
// is anything that marshals to a JSON object (a map, a struct with
// omitempty fields, json.RawMessage); a field it leaves out keeps the value
// from below. It is marshalled now: later changes to it are not seen.
func (c *Context) Intercept(name string, config any) *Context {
	l := &layer{}
	l.raw, l.err = toJSON(config)
	x := c.Extend(interceptKey{name}, l)
	x.intercepting = x
	return x
}

// layers returns the Intercept layers for name on c's chain, nearest first.
func (c *Context) layers(name string) []*layer {
	var out []*layer
	for x := c.intercepting; x != nil; x = x.parent.intercepting {
		if x.key.(interceptKey).name == name {
			out = append(out, x.value.(*layer))
		}
	}
	return out
}

// nearestLayer returns the context holding the nearest Intercept layer for
// name on c's chain, or nil.
func (c *Context) nearestLayer(name string) *Context {
	for x := c.intercepting; x != nil; x = x.parent.intercepting {
		if x.key.(interceptKey).name == name {
			return x
		}
	}
	return nil
}

// ResolveConfig returns base with the Intercept layers for the service name
// on ctx's chain merged in, from the root down, so that the nearest layer
// wins (Cordis's Service.resolveConfig). A service calls it with the
// caller's context and its own config. The merge is JSON's: each layer sets
// the fields it has, objects merge field by field, anything else is
// replaced, and fields C does not know are ignored. Without layers base
// comes back as it is, at no cost; otherwise C must survive a JSON round
// trip, as a plugin config does.
func ResolveConfig[C any](ctx *Context, name string, base C) (C, error) {
	if ctx.intercepting == nil {
		return base, nil
	}
	return resolveConfig(ctx, name, base)
}

func resolveConfig[C any](ctx *Context, name string, base C) (C, error) {
	layers := ctx.layers(name)
	if len(layers) == 0 {
		return base, nil
	}
	var out C
	raw, err := json.Marshal(base)
	if err == nil {
		err = json.Unmarshal(raw, &out) // a copy: the layers never write into base
	}
	if err != nil {
		return base, fmt.Errorf("runtime: config of service %q: %w", name, err)
	}
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		err := l.err
		if err == nil {
			err = json.Unmarshal(l.raw, &out)
		}
		if err != nil {
			return base, fmt.Errorf("runtime: intercepted config of service %q: %w", name, err)
		}
	}
	return out, nil
}

// Log is the logger's name in Intercept: a [LogConfig] layer renames what
// [Context.Logger] reports for a context and the plugins plugged under it.
//
//	audit := ctx.Intercept(runtime.Log, runtime.LogConfig{Name: "audit"})
const Log = "logger"

// LogConfig is the logger's Intercept config.
type LogConfig struct {
	// Name replaces the fiber's name as the "plugin" attribute.
	Name string `json:"name,omitempty"`
}

// Logger returns a logger that names the fiber ("plugin" attribute), or the
// name an Intercept of [Log] gives.
func (c *Context) Logger() *slog.Logger {
	if c.intercepting == nil {
		return c.fiber.logger()
	}
	x := c.nearestLayer(Log)
	if x == nil {
		return c.fiber.logger()
	}
	// Layers of other services between c and x do not change the result,
	// so x's layer keeps it.
	l := x.value.(*layer)
	if log := l.log.Load(); log != nil {
		return log
	}
	cfg, err := ResolveConfig(x, Log, LogConfig{})
	if err != nil || cfg.Name == "" {
		return c.fiber.logger()
	}
	log := c.rt.logger.With("plugin", cfg.Name)
	l.log.Store(log)
	return log
}
