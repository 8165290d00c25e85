package runtime

import (
	"reflect"
	"slices"
	"sync/atomic"
)

// serviceKey is a service name within one isolation domain. The nil domain
// is the root's, shared by every context that does not isolate the name.
type serviceKey struct {
	name   string
	domain *isolation
}

// isolation is the domain one [Context.Isolate] call makes for a name, or
// that every Isolate with one label shares. It has a field so that two
// domains are never the same pointer.
type isolation struct{ name string }

// isolationKey is the context value under which Isolate records a domain.
type isolationKey struct{ name string }

// realmKey names the domain a label makes for a service name.
type realmKey struct {
	name  string
	label any
}

// Isolate returns a context, sharing c's fiber, in which the service name
// has a domain of its own: a provider plugged under it (or providing on it)
// serves only the plugins plugged under it, and they see only that
// provider; everyone else keeps seeing the shared one. Two workspaces, each
// with its own "fs", live under one root this way. Other services are
// unaffected, and an Isolate further down makes a new domain again.
//
// With a label, every context isolated for name with an equal label shares
// one domain (Cordis's isolate label): a service provided in one is seen in
// all of them, and by no one else. Like a context key, a label should be a
// value of a type of your own; it must be comparable, and Isolate panics
// otherwise, or when given more than one. A label's domain lasts as long
// as the root.
func (c *Context) Isolate(name string, label ...any) *Context {
	var d *isolation
	switch len(label) {
	case 0:
		d = &isolation{name}
	case 1:
		d = c.rt.realm(name, label[0])
	default:
		panic("runtime: Isolate takes at most one label")
	}
	x := c.Extend(isolationKey{name}, d)
	x.isolating = x
	return x
}

// realm returns the domain that label makes for name, the same one on
// every call.
func (r *rt) realm(name string, label any) *isolation {
	if label == nil || !reflect.ValueOf(label).Comparable() {
		panic("runtime: an Isolate label must be non-nil and comparable")
	}
	key := realmKey{name, label}
	r.svcMu.Lock()
	defer r.svcMu.Unlock()
	d := r.realms[key]
	if d == nil {
		if r.realms == nil {
			r.realms = make(map[realmKey]*isolation)
		}
		d = &isolation{name}
		r.realms[key] = d
	}
	return d
}

// keyOf resolves name in c's domain: the nearest Isolate(name) on the way up.
func (c *Context) keyOf(name string) serviceKey {
	for x := c.isolating; x != nil; x = x.parent.isolating {
		if x.key.(isolationKey).name == name {
			return serviceKey{name, x.value.(*isolation)}
		}
	}
	return serviceKey{name: name}
}

// indexOf is slices.Index for keys, comparing the domain pointers before the
// names: Get runs it on every call.
func indexOf(keys []serviceKey, key serviceKey) int {
	for i, k := range keys {
		if k.domain == key.domain && k.name == key.name {
			return i
		}
	}
	return -1
}

func (c *Context) keysOf(names []string) []serviceKey {
	if len(names) == 0 {
		return nil
	}
	keys := make([]serviceKey, len(names))
	for i, name := range names {
		keys[i] = c.keyOf(name)
	}
	return keys
}

// record is one provided service. Dependents keep a pointer to it, so Set
// replaces the value in place for all of them at once.
type record struct {
	key      serviceKey
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

// Provide registers value as the service in ctx's domain, owned by ctx's
// fiber: it goes away when that fiber is torn down. Dependents load once the
// providing fiber is ACTIVE (at once when provided by the host on the root).
// A name has one provider at a time in a domain: a second Provide fails
// with ErrServiceConflict.
func (s Service[T]) Provide(ctx *Context, value T) error {
	return ctx.rt.provide(ctx.fiber, ctx.keyOf(s.name), value)
}

// Set replaces the value in place; dependents are not restarted and see the
// new value on their next Get. Only the providing fiber may Set.
func (s Service[T]) Set(ctx *Context, value T) error {
	rec := ctx.rt.record(ctx.keyOf(s.name))
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

// Domain returns a filter that reaches the listeners in ctx's isolation
// domain for s: those whose context resolves s's name to the same provider
// slot as ctx (the shared one, or the one an Isolate made), plus global
// listeners. A service emits through it so that only its own domain hears
// (Cordis's service filter, which scopes an emit with the service as this):
//
//	scope := fs.Service.Domain(ctx) // once, in apply
//	_ = Changed.EmitTo(ctx, scope, change)
//
// It works with every filtered mode. Build it once and keep it: the filter
// is one allocation, a dispatch through it none.
func (s Service[T]) Domain(ctx *Context) Filter {
	d := domainFilter(ctx.keyOf(s.name))
	return &d
}

// domainFilter accepts the listeners whose context resolves the name to the
// same domain.
type domainFilter serviceKey

var _ Filter = (*domainFilter)(nil)

func (d *domainFilter) Accept(listener *Context) bool {
	return listener.keyOf(d.name).domain == d.domain
}

// Get returns the service for a context that injects it (or whose fiber or an
// ancestor provides it, or when it is provided on the root).
func (s Service[T]) Get(ctx *Context) (T, error) {
	var zero T
	v, err := ctx.rt.get(ctx, s.name)
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok && v != nil {
		return zero, serviceErr(ErrServiceType, "service %q holds %T, not %T", s.name, v, zero)
	}
	return t, nil
}

// Lookup is the optional lookup: no inject needed, reports absence. It sees,
// in ctx's domain, a service whose provider is ACTIVE, or that ctx's own
// fiber or an ancestor provides.
func (s Service[T]) Lookup(ctx *Context) (T, bool) {
	var zero T
	f := ctx.fiber
	if f.State() == Disposed {
		return zero, false
	}
	rec := ctx.rt.record(ctx.keyOf(s.name))
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

func (r *rt) record(key serviceKey) *record {
	r.svcMu.RLock()
	defer r.svcMu.RUnlock()
	return r.services[key]
}

func (r *rt) provide(f *Fiber, key serviceKey, value any) error {
	rec := &record{key: key, provider: f}
	rec.value.Store(&value)
	err := f.add(&effect{f: f, teardown: func() error { r.unprovide(rec); return nil }}, func() error {
		r.svcMu.Lock()
		defer r.svcMu.Unlock()
		if other := r.services[key]; other != nil {
			return serviceErr(ErrServiceConflict, "service %q is already provided by plugin %q",
				key.name, other.provider.name)
		}
		r.services[key] = rec
		return nil
	})
	if err != nil {
		return err
	}
	if f.State() == Active {
		r.serviceChanged(key)
	}
	return nil
}

// unprovide removes rec: first it stops being available and dependents are
// torn down (their teardown can still Get it), then it leaves the registry.
func (r *rt) unprovide(rec *record) {
	rec.retired.Store(true)
	r.serviceChanged(rec.key)
	r.svcMu.Lock()
	if r.services[rec.key] == rec {
		delete(r.services, rec.key)
	}
	r.svcMu.Unlock()
}

// get resolves a service for ctx following the visibility rules: the
// nearest fiber that injects it in ctx's domain, else a provider that is
// ctx's fiber, an ancestor or the root.
func (r *rt) get(ctx *Context, name string) (any, error) {
	f := ctx.fiber
	if f.State() == Disposed {
		return nil, serviceErr(ErrInactive, "cannot get service %q: the context is disposed", name)
	}
	key := ctx.keyOf(name)
	for a := f; a != nil; a = a.parent {
		i := indexOf(a.inject, key)
		if i < 0 {
			continue
		}
		if deps := a.deps.Load(); deps != nil {
			return (*deps)[i].load(), nil // resolve keeps the order of the injects
		}
		return nil, serviceErr(ErrServiceUnavailable, "cannot get required service %q in inactive context", name)
	}
	if rec := r.record(key); rec != nil && !rec.retired.Load() && rec.provider.encloses(f) {
		return rec.load(), nil
	}
	return nil, serviceErr(ErrNotInjected, "cannot get service %q without inject", name)
}

// resolve finds an available record for every key. Called with the
// dependent's lock held (lock order: fiber, then svcMu).
func (r *rt) resolve(keys []serviceKey) ([]*record, bool) {
	if len(keys) == 0 {
		return nil, true
	}
	r.svcMu.RLock()
	defer r.svcMu.RUnlock()
	epoch := make([]*record, len(keys))
	for i, key := range keys {
		rec := r.services[key]
		if rec == nil || !rec.available() {
			return nil, false
		}
		epoch[i] = rec
	}
	return epoch, true
}

// missing names the keys that have no available record.
func (r *rt) missing(keys []serviceKey) []string {
	r.svcMu.RLock()
	defer r.svcMu.RUnlock()
	var names []string
	for _, key := range keys {
		if rec := r.services[key]; rec == nil || !rec.available() {
			names = append(names, key.name)
		}
	}
	return names
}

// current reports whether f's loaded dependencies are still the available
// ones (same records, providers still ACTIVE).
func (r *rt) current(f *Fiber) bool {
	if len(f.inject) == 0 {
		return true
	}
	deps := f.deps.Load()
	if deps == nil {
		return false
	}
	r.svcMu.RLock()
	defer r.svcMu.RUnlock()
	for _, rec := range *deps {
		if r.services[rec.key] != rec || !rec.available() {
			return false
		}
	}
	return true
}

// depend and forget maintain the index of fibers by injected service.
func (r *rt) depend(f *Fiber) {
	if len(f.inject) == 0 {
		return
	}
	r.svcMu.Lock()
	defer r.svcMu.Unlock()
	for _, key := range f.inject {
		if !slices.Contains(r.dependents[key], f) {
			r.dependents[key] = append(r.dependents[key], f)
		}
	}
}

func (r *rt) forget(f *Fiber) {
	if len(f.inject) == 0 {
		return
	}
	r.svcMu.Lock()
	defer r.svcMu.Unlock()
	for _, key := range f.inject {
		list := r.dependents[key]
		if i := slices.Index(list, f); i >= 0 {
			list = slices.Delete(slices.Clone(list), i, i+1)
			if len(list) == 0 {
				delete(r.dependents, key)
			} else {
				r.dependents[key] = list
			}
		}
	}
}

// serviceChanged lets every dependent of the keys reconcile (load, unload
// or restart), on the calling goroutine, in the order they were plugged.
func (r *rt) serviceChanged(keys ...serviceKey) {
	var todo []*Fiber
	r.svcMu.RLock()
	for _, key := range keys {
		todo = append(todo, r.dependents[key]...)
	}
	r.svcMu.RUnlock()
	for _, d := range todo {
		d.reconcile()
	}
}

// providerChanged notifies the dependents of every service f provides,
// after f entered or left ACTIVE.
func (r *rt) providerChanged(f *Fiber) {
	var keys []serviceKey
	r.svcMu.RLock()
	for key, rec := range r.services {
		if rec.provider == f {
			keys = append(keys, key)
		}
	}
	r.svcMu.RUnlock()
	if len(keys) > 0 {
		r.serviceChanged(keys...)
	}
}
