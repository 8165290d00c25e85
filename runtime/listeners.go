package runtime

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Event names are interned process-wide into small integers so that a
// dispatch finds its listeners with two atomic loads and an index, without
// hashing the name.
var eventNames struct {
	mu  sync.Mutex
	ids map[string]uint32
}

func internEvent(name string) uint32 {
	eventNames.mu.Lock()
	defer eventNames.mu.Unlock()
	if eventNames.ids == nil {
		eventNames.ids = make(map[string]uint32)
	}
	id, ok := eventNames.ids[name]
	if !ok {
		id = uint32(len(eventNames.ids) + 1) // 0 is the zero Event
		eventNames.ids[name] = id
	}
	return id
}

func lookupEvent(name string) (uint32, bool) {
	eventNames.mu.Lock()
	defer eventNames.mu.Unlock()
	id, ok := eventNames.ids[name]
	return id, ok
}

// listener is one registration. Its identity is its pointer: the disposer
// removes exactly this registration, never another with the same function.
type listener struct {
	ctx    *Context
	fn     any // func(A) error, func(A) (R, error) or func(A, Next[R]) (R, error)
	global bool
}

// slot holds one event's listeners and observers in one root. Both lists are
// immutable slices replaced on write (copy-on-write), so a dispatch iterates a
// snapshot without holding any lock.
type slot struct {
	name      string
	listeners atomic.Pointer[[]*listener]
	observers atomic.Pointer[[]*observer]
}

// slot returns the slot of event id, or nil if nothing was ever registered.
func (r *rt) slot(id uint32) *slot {
	if s := r.slots.Load(); s != nil && int(id) < len(*s) {
		return (*s)[id]
	}
	return nil
}

// slotFor returns the slot of event id, creating it. Callers hold r.mu.
func (r *rt) slotFor(id uint32, name string) *slot {
	var cur []*slot
	if p := r.slots.Load(); p != nil {
		cur = *p
	}
	if int(id) < len(cur) && cur[id] != nil {
		return cur[id]
	}
	next := make([]*slot, max(len(cur), int(id)+1))
	copy(next, cur)
	s := &slot{name: name}
	next[id] = s
	r.slots.Store(&next)
	return s
}

func (r *rt) listen(ctx *Context, id uint32, name string, fn any, opts []ListenOption) (func(), error) {
	var o listenOpts
	for _, opt := range opts {
		opt(&o)
	}
	l := &listener{ctx: ctx, fn: fn, global: o.global}
	r.mu.Lock()
	s := r.slotFor(id, name)
	r.mu.Unlock()
	e, err := ctx.fiber.track(func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		removeFrom(&s.listeners, l)
		return nil
	}, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		insertInto(&s.listeners, l, o.prepend)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func() { _ = e.dispose() }, nil
}

// insertInto and removeFrom replace a copy-on-write list. Callers hold r.mu.
func insertInto[T any](list *atomic.Pointer[[]*T], x *T, prepend bool) {
	var cur []*T
	if p := list.Load(); p != nil {
		cur = *p
	}
	next := make([]*T, 0, len(cur)+1)
	if prepend {
		next = append(append(next, x), cur...)
	} else {
		next = append(append(next, cur...), x)
	}
	list.Store(&next)
}

func removeFrom[T any](list *atomic.Pointer[[]*T], x *T) bool {
	p := list.Load()
	if p == nil {
		return false
	}
	cur := *p
	for i, y := range cur {
		if y != x {
			continue
		}
		if len(cur) == 1 {
			list.Store(nil)
			return true
		}
		next := make([]*T, 0, len(cur)-1)
		next = append(append(next, cur[:i]...), cur[i+1:]...)
		list.Store(&next)
		return true
	}
	return false
}

func (r *rt) snapshot(id uint32) []*listener {
	if s := r.slot(id); s != nil {
		if p := s.listeners.Load(); p != nil {
			return *p
		}
	}
	return nil
}

// ListenerCount reports how many listeners are registered for the event
// name in c's root. Hosts and tests use it to check that plugins clean up.
func (c *Context) ListenerCount(name string) int {
	id, ok := lookupEvent(name)
	if !ok {
		return 0
	}
	return len(c.rt.snapshot(id))
}

// ListenOption adjusts a listener registration.
type ListenOption func(*listenOpts)

type listenOpts struct{ prepend, global bool }

// Prepend puts the listener in front of the existing ones.
func Prepend() ListenOption { return func(o *listenOpts) { o.prepend = true } }

// Global makes the listener ignore emit filters.
func Global() ListenOption { return func(o *listenOpts) { o.global = true } }

// Filter decides which listeners a filtered dispatch (EmitTo, ParallelTo,
// BailTo, SerialTo, RunTo) reaches, by their context.
type Filter interface{ Accept(listener *Context) bool }

// reached reports whether a dispatch with filter (nil: none) calls l.
func (l *listener) reached(filter Filter) bool {
	return filter == nil || l.global || filter.Accept(l.ctx)
}

// mismatch reports a listener registered under the same name with another
// signature (two packages declaring one event name with different types).
func mismatch(name string, fn any) error {
	return fmt.Errorf("runtime: listener of %q has signature %T, which does not match this dispatch", name, fn)
}
