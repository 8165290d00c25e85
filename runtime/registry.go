package runtime

import (
	"cmp"
	"errors"
	"maps"
	"slices"
	"sync"
)

// plugins is a root's registry of applied plugins (Cordis's ctx.registry):
// every plugin with a fiber that is not disposed, and those fibers, so that
// a loader or a hot reload can find and dispose every application of one
// plugin wherever it was plugged.
type plugins struct {
	mu    sync.Mutex       // held for map and slice updates only, never while plugin code runs
	seq   uint64           // counts first applications
	index map[any]*applied // by pluginKey
}

// applied is one plugin in the registry with its live fibers, oldest first.
type applied struct {
	seq    uint64 // orders Plugins by first application
	plugin Plugin // the value first applied
	fibers []*Fiber
	one    [1]*Fiber // the first backing array: most plugins are applied once
}

// enroll adds f under p, unless f is already being disposed (a parent's
// teardown may reach it before Plugin returns). Lock order: registry, then fiber.
func (r *rt) enroll(p Plugin, f *Fiber) {
	reg := &r.plugins
	reg.mu.Lock()
	defer reg.mu.Unlock()
	f.mu.Lock()
	gone := f.disposing
	f.mu.Unlock()
	if gone {
		return
	}
	a := reg.index[f.key]
	if a == nil {
		if reg.index == nil {
			reg.index = make(map[any]*applied)
		}
		reg.seq++
		a = &applied{seq: reg.seq, plugin: p}
		a.fibers = a.one[:0]
		reg.index[f.key] = a
	}
	a.fibers = append(a.fibers, f)
}

// withdraw removes f, and its plugin once it has no fiber left.
func (r *rt) withdraw(f *Fiber) {
	reg := &r.plugins
	reg.mu.Lock()
	defer reg.mu.Unlock()
	a := reg.index[f.key]
	if a == nil {
		return
	}
	if i := slices.Index(a.fibers, f); i >= 0 {
		a.fibers = slices.Delete(a.fibers, i, i+1)
	}
	if len(a.fibers) == 0 {
		delete(reg.index, f.key)
	}
}

// Plugins returns the plugins applied anywhere under c's root that have a
// fiber not yet disposed (PENDING and FAILED ones count), in the order they
// were first applied. Applying one plugin twice gives one entry with two
// fibers. As Cordis keys a plugin by its apply function, a plugin made by
// Func, Configured or Constructor is known by its apply, any other by its
// value, or by its type when the value is not comparable (a struct holding
// a slice): such values share one entry, listed as the first one applied.
func (c *Context) Plugins() []Plugin {
	reg := &c.rt.plugins
	reg.mu.Lock()
	defer reg.mu.Unlock()
	entries := slices.SortedFunc(maps.Values(reg.index), func(a, b *applied) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Plugin, len(entries))
	for i, a := range entries {
		out[i] = a.plugin
	}
	return out
}

// Fibers returns p's fibers anywhere under c's root that are not disposed,
// oldest first, or nil if p has none.
func (c *Context) Fibers(p Plugin) []*Fiber {
	reg := &c.rt.plugins
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if a := reg.index[pluginKey(p)]; a != nil {
		return slices.Clone(a.fibers)
	}
	return nil
}

// DisposePlugin disposes every fiber of p wherever it is in the tree, newest
// first, and returns their teardown errors joined; the fibers that plugged
// them stay as they are (Cordis's registry.delete). A hot reload re-plugs
// the new version at each old fiber's [Fiber.Parent] with its
// [Fiber.Config]. Fibers applied while it runs are left alone. As with
// [Fiber.Dispose], do not call it from an apply of p.
func (c *Context) DisposePlugin(p Plugin) error {
	fibers := c.Fibers(p)
	var errs []error
	for i := len(fibers) - 1; i >= 0; i-- {
		if err := fibers[i].Dispose(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
