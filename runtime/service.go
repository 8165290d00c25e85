package runtime

import (
	"slices"
	"sync/atomic"
)

// record is one provided service. Dependents keep a pointer to it, so Set
// replaces the value in place for all of them at once.
type record struct {
	name     string
	provider *Fiber
	value    atomic.Pointer[any]
	retired  atomic.Bool // being removed: no longer available to new loads
}

func (rec *record) load() any { return *rec.value.Load() }

// available reports whether dependents may load against rec.
func (rec *record) available() bool {
	return !rec.retired.Load() && rec.provider.State() == Active
}

// ServiceRef identifies a service in [Inject]. A [Service] handle is one, so
// a misspelt service is a compile error; [Named] is the form for names only
// known at run time. The method name is distinct from Name so that plugins,
// events and fibers are not service references by accident.
type ServiceRef interface{ ServiceName() string }

// Named refers to a service by its name, for hosts that load plugins by name.
type Named string

// ServiceName returns n.
func (n Named) ServiceName() string { return string(n) }

func namedAll(names []string) []ServiceRef {
	refs := make([]ServiceRef, len(names))
	for i, name := range names {
		refs[i] = Named(name)
	}
	return refs
}

var (
	_ ServiceRef = Service[any]{}
	_ ServiceRef = Named("")
)

// Service is a typed, named service handle, declared once by its owner package:
//
//	var FS = runtime.NewService[FileSystem]("fs")
type Service[T any] struct{ name string }

// NewService declares a service handle.
func NewService[T any](name string) Service[T] { return Service[T]{name} }

// Name returns the service name.
func (s Service[T]) Name() string { return s.name }

// ServiceName returns the service name, making s a [ServiceRef].
func (s Service[T]) ServiceName() string { return s.name }

// Provide registers value as the service, owned by ctx's fiber: it goes away
// when that fiber is torn down. Dependents load once the providing fiber is
// ACTIVE (at once when provided by the host on the root). A name has one
// provider at a time: a second Provide fails with ErrServiceConflict.
func (s Service[T]) Provide(ctx *Context, value T) error {
	return ctx.rt.provide(ctx.fiber, s.name, value)
}

// Set replaces the value in place; dependents are not restarted and see the
// new value on their next Get. Only the providing fiber may Set.
func (s Service[T]) Set(ctx *Context, value T) error {
	rec := ctx.rt.record(s.name)
	if rec == nil || rec.retired.Load() {
		return serviceErr(ErrServiceUnavailable, "cannot set service %q: it is not provided", s.name)
	}
	if rec.provider != ctx.fiber {
		return serviceErr(ErrNotProvider, "cannot set service %q: it is provided by plugin %q, not %q",
			s.name, rec.provider.name, ctx.fiber.name)
	}
	var v any = value
	rec.value.Store(&v)
	return nil
}

// Get returns the service for a context that injects it (or whose fiber or an
// ancestor provides it, or when it is provided on the root).
func (s Service[T]) Get(ctx *Context) (T, error) {
	var zero T
	v, err := ctx.rt.get(ctx.fiber, s.name)
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok && v != nil {
		return zero, serviceErr(ErrServiceType, "service %q holds %T, not %T", s.name, v, zero)
	}
	return t, nil
}

// Lookup is the optional lookup: no inject needed, reports absence. It sees
// a service whose provider is ACTIVE, or that ctx's own fiber or an ancestor
// provides.
func (s Service[T]) Lookup(ctx *Context) (T, bool) {
	var zero T
	f := ctx.fiber
	if f.State() == Disposed {
		return zero, false
	}
	rec := ctx.rt.record(s.name)
	if rec == nil || rec.retired.Load() || (rec.provider.State() != Active && !rec.provider.encloses(f)) {
		return zero, false
	}
	t, ok := rec.load().(T)
	return t, ok
}

// encloses reports whether f is a or one of its descendants.
func (a *Fiber) encloses(f *Fiber) bool {
	for ; f != nil; f = f.parent {
		if f == a {
			return true
		}
	}
	return false
}

func (r *rt) record(name string) *record {
	r.svcMu.RLock()
	defer r.svcMu.RUnlock()
	return r.services[name]
}

func (r *rt) provide(f *Fiber, name string, value any) error {
	rec := &record{name: name, provider: f}
	rec.value.Store(&value)
	err := f.add(&effect{f: f, teardown: func() error { r.unprovide(rec); return nil }}, func() error {
		r.svcMu.Lock()
		defer r.svcMu.Unlock()
		if other := r.services[name]; other != nil {
			return serviceErr(ErrServiceConflict, "service %q is already provided by plugin %q",
				name, other.provider.name)
		}
		r.services[name] = rec
		return nil
	})
	if err != nil {
		return err
	}
	if f.State() == Active {
		r.serviceChanged(name)
	}
	return nil
}

// unprovide removes rec: first it stops being available and dependents are
// torn down (their teardown can still Get it), then it leaves the registry.
func (r *rt) unprovide(rec *record) {
	rec.retired.Store(true)
	r.serviceChanged(rec.name)
	r.svcMu.Lock()
	if r.services[rec.name] == rec {
		delete(r.services, rec.name)
	}
	r.svcMu.Unlock()
}

// get resolves a service for fiber f following the visibility rules.
func (r *rt) get(f *Fiber, name string) (any, error) {
	if f.State() == Disposed {
		return nil, serviceErr(ErrInactive, "cannot get service %q: the context is disposed", name)
	}
	for a := f; a != nil; a = a.parent {
		if a.spec == nil || !a.spec.injects(name) {
			continue
		}
		if deps := a.deps.Load(); deps != nil {
			for _, rec := range *deps {
				if rec.name == name {
					return rec.load(), nil
				}
			}
		}
		return nil, serviceErr(ErrServiceUnavailable, "cannot get required service %q in inactive context", name)
	}
	if rec := r.record(name); rec != nil && !rec.retired.Load() && rec.provider.encloses(f) {
		return rec.load(), nil
	}
	return nil, serviceErr(ErrNotInjected, "cannot get service %q without inject", name)
}

// resolve finds an available record for every name. Called with the
// dependent's lock held (lock order: fiber, then svcMu).
func (r *rt) resolve(names []string) ([]*record, bool) {
	if len(names) == 0 {
		return nil, true
	}
	r.svcMu.RLock()
	defer r.svcMu.RUnlock()
	epoch := make([]*record, len(names))
	for i, name := range names {
		rec := r.services[name]
		if rec == nil || !rec.available() {
			return nil, false
		}
		epoch[i] = rec
	}
	return epoch, true
}

// current reports whether f's loaded dependencies are still the available
// ones (same records, providers still ACTIVE).
func (r *rt) current(f *Fiber) bool {
	if len(f.spec.inject) == 0 {
		return true
	}
	deps := f.deps.Load()
	if deps == nil {
		return false
	}
	r.svcMu.RLock()
	defer r.svcMu.RUnlock()
	for _, rec := range *deps {
		if r.services[rec.name] != rec || !rec.available() {
			return false
		}
	}
	return true
}

// depend and forget maintain the index of fibers by injected name.
func (r *rt) depend(f *Fiber) {
	if len(f.spec.inject) == 0 {
		return
	}
	r.svcMu.Lock()
	defer r.svcMu.Unlock()
	for _, name := range f.spec.inject {
		if !slices.Contains(r.dependents[name], f) {
			r.dependents[name] = append(r.dependents[name], f)
		}
	}
}

func (r *rt) forget(f *Fiber) {
	if f.spec == nil || len(f.spec.inject) == 0 {
		return
	}
	r.svcMu.Lock()
	defer r.svcMu.Unlock()
	for _, name := range f.spec.inject {
		list := r.dependents[name]
		if i := slices.Index(list, f); i >= 0 {
			list = slices.Delete(slices.Clone(list), i, i+1)
			if len(list) == 0 {
				delete(r.dependents, name)
			} else {
				r.dependents[name] = list
			}
		}
	}
}

// serviceChanged lets every dependent of name reconcile (load, unload or
// restart), on the calling goroutine, in the order they were plugged.
func (r *rt) serviceChanged(names ...string) {
	var todo []*Fiber
	r.svcMu.RLock()
	for _, name := range names {
		todo = append(todo, r.dependents[name]...)
	}
	r.svcMu.RUnlock()
	for _, d := range todo {
		d.reconcile()
	}
}

// providerChanged notifies the dependents of every service f provides,
// after f entered or left ACTIVE.
func (r *rt) providerChanged(f *Fiber) {
	var names []string
	r.svcMu.RLock()
	for name, rec := range r.services {
		if rec.provider == f {
			names = append(names, name)
		}
	}
	r.svcMu.RUnlock()
	if len(names) > 0 {
		r.serviceChanged(names...)
	}
}
