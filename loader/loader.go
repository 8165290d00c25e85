package loader

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"slices"
	"sync"

	"github.com/gordis-run/gordis/runtime"
)

// ErrClosed is returned by Reload and Watch after Close.
var ErrClosed = errors.New("loader: closed")

// Loader keeps the plugins under a context in step with a config file.
//
// Each entry of the file is one fiber, plugged below a fiber of the
// loader's own (named "loader"), or below its group's fiber. A reload
// diffs the file against what is running, by id, and touches only what
// changed. Two locks divide the work: reloadMu serializes Reload and Close
// and is held while plugins run, mu guards the entries and is never held
// while plugin code runs, so the runtime's events (a plugin updating or
// disposing itself) are handled while a reload is under way.
type Loader struct {
	file     string
	cat      *Catalog
	override Override
	top      *runtime.Fiber
	log      *slog.Logger
	checked  map[string]bool // the configs the last load found valid; reloadMu

	reloadMu sync.Mutex
	fileMu   sync.Mutex // serializes writes to the file

	mu      sync.Mutex
	seen    []byte // the file as the last read found it, for the watchers
	seenOK  bool   // false: the last read failed (a missing file, say)
	closed  bool
	done    chan struct{} // closed by Close: watchers stop
	byID    map[string]*entry
	byFiber map[*runtime.Fiber]*entry
	seq     uint64

	watchers sync.WaitGroup
}

// entry is a plugged entry: its spec as last applied and its fiber.
type entry struct {
	spec   *spec
	fiber  *runtime.Fiber
	parent *entry // its group, nil at the top
	seq    uint64 // plug order: disposal goes newest first
	ours   int    // >0 while the loader itself updates the fiber
	gone   bool   // the loader disposes it, or it went away
}

// Option adjusts Open.
type Option func(*Loader)

// WithOverride applies fn to every entry's config on every load.
func WithOverride(fn Override) Option { return func(l *Loader) { l.override = fn } }

// groupPlugin is the fiber of a group: it applies nothing itself; the
// loader plugs the group's entries on its context, so that disposing the
// group disposes them and its isolate and intercept reach them.
var groupPlugin = runtime.Func(Group, func(*runtime.Context) error { return nil })

// Open reads file, checks every entry, and plugs the enabled ones under
// ctx, in file order. A file that does not parse or validate plugs nothing:
// the error is an Errors naming each problem with its position. An entry
// that the runtime refuses or whose apply fails undoes the whole Open, so
// that a process never starts with part of its file: the error is a
// *Error naming the entry. An entry waiting for a service is not a
// failure.
func Open(ctx *runtime.Context, file string, cat *Catalog, opts ...Option) (*Loader, error) {
	if cat == nil {
		return nil, errors.New("loader: nil catalogue")
	}
	l := &Loader{
		file:    file,
		cat:     cat,
		done:    make(chan struct{}),
		byID:    map[string]*entry{},
		byFiber: map[*runtime.Fiber]*entry{},
	}
	for _, opt := range opts {
		opt(l)
	}
	t, err := l.read()
	if err != nil {
		return nil, err
	}
	top, err := ctx.Plugin(runtime.Func("loader", l.attach), nil)
	if err != nil {
		return nil, err
	}
	l.top, l.log = top, top.Context().Logger()
	if err := top.Wait(); err != nil {
		return nil, errors.Join(err, top.Dispose())
	}
	l.reloadMu.Lock()
	err = l.apply(t)
	l.reloadMu.Unlock()
	if err != nil {
		return nil, errors.Join(err, l.Close())
	}
	return l, nil
}

// attach is the loader fiber's apply: it follows the runtime's reports of
// entries that update or dispose themselves, to write them back.
func (l *Loader) attach(ctx *runtime.Context) error {
	if _, err := runtime.UpdateEvent.On(ctx, l.updated); err != nil {
		return err
	}
	_, err := runtime.StatusEvent.On(ctx, l.status)
	return err
}

// read reads and checks the file; reloadMu is held (or Open runs).
func (l *Loader) read() (*tree, error) {
	src, err := os.ReadFile(l.file)
	l.mu.Lock()
	l.seen, l.seenOK = src, err == nil
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	p := &parser{file: l.file, cat: l.cat, override: l.override, checked: l.checked}
	t, err := p.parse(src)
	if err != nil {
		return nil, err
	}
	l.checked = t.checked
	return t, nil
}

// Reload reads the file again and applies the difference: removed and
// disabled entries are disposed (newest first), changed configs update
// their fibers in place (Fiber.Update), new entries are plugged (in file
// order), and the rest is not touched. An entry whose plugin, group,
// inject, isolate or intercept changed is disposed and plugged again. A
// file that fails to parse or validate changes nothing: the error is an
// Errors. Otherwise the whole difference is applied, and what failed on
// the way (an apply, an update an OnUpdate vetoed, a restart) is returned
// joined, a *Error per entry. An entry that failed is tried again, its
// config changed or not, and one whose OnUpdate refused the file's config
// is offered it again.
func (l *Loader) Reload() error {
	_, err := l.reload()
	return err
}

// reload is Reload, saying whether the file was applied: its error is
// then about entries that failed, and the running plugins changed.
func (l *Loader) reload() (applied bool, err error) {
	l.reloadMu.Lock()
	defer l.reloadMu.Unlock()
	if l.isClosed() || l.top.State() == runtime.Disposed { // or the root closed
		return false, ErrClosed
	}
	t, err := l.read()
	if err != nil {
		return false, err
	}
	return true, l.apply(t)
}

func (l *Loader) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Fiber returns the fiber of the entry id, or nil when it is not plugged
// (unknown, disabled, or disposed: by a reload, Close, or the root
// closing).
func (l *Loader) Fiber(id string) *runtime.Fiber {
	l.mu.Lock()
	e := l.byID[id]
	l.mu.Unlock()
	if e == nil || e.fiber.State() == runtime.Disposed {
		return nil
	}
	return e.fiber
}

// apply makes the running entries match t. reloadMu is held.
func (l *Loader) apply(t *tree) error {
	var errs []error
	// Phase 1: what goes. An entry stays when its spec still places it
	// where it is and its group stays.
	l.mu.Lock()
	memo := map[*entry]bool{}
	var stays func(e *entry) bool
	stays = func(e *entry) bool {
		if v, ok := memo[e]; ok {
			return v
		}
		s := t.byID[e.spec.id]
		v := s != nil && !s.disabled && s.place == e.spec.place && parentID(s) == parentID(e.spec) &&
			(e.parent == nil || stays(e.parent))
		memo[e] = v
		return v
	}
	var drop []*entry // the outermost of the entries that go
	for _, e := range l.byID {
		if stays(e) {
			continue
		}
		e.gone = true
		delete(l.byID, e.spec.id)
		delete(l.byFiber, e.fiber)
		if e.parent == nil || stays(e.parent) {
			drop = append(drop, e)
		}
	}
	l.mu.Unlock()
	slices.SortFunc(drop, func(a, b *entry) int { return cmp.Compare(b.seq, a.seq) })
	for _, e := range drop {
		if err := e.fiber.Dispose(); err != nil {
			// No position: the entry may be gone from the file.
			errs = append(errs, &Error{File: l.file, ID: e.spec.id, Name: e.spec.name, Err: err})
		}
	}
	// Phase 2: update and plug, in file order.
	var plugged []*entry
	var walk func(list []*spec, parent *entry)
	walk = func(list []*spec, parent *entry) {
		for _, s := range list {
			if s.disabled {
				continue
			}
			l.mu.Lock()
			e := l.byID[s.id]
			var was *spec
			changed := e != nil && s.plugin != nil && !bytes.Equal(e.spec.raw, s.raw)
			if e != nil {
				was, e.spec = e.spec, s
				if changed {
					e.ours++
				}
			}
			l.mu.Unlock()
			if e == nil {
				var err error
				if e, err = l.plug(s, parent); err != nil {
					errs = append(errs, l.entryError(s, err))
					continue // refused, and its entries with it
				}
				plugged = append(plugged, e)
			} else if changed {
				err := e.fiber.Update(s.arg())
				// Refused (by OnUpdate): it runs the config it had,
				// which the next reload compares with.
				refused := err != nil && e.fiber.State() != runtime.Failed
				l.mu.Lock()
				e.ours--
				if refused {
					kept := *s
					kept.config, kept.raw = was.config, was.raw
					e.spec = &kept
				}
				l.mu.Unlock()
				if err != nil && !errors.Is(err, runtime.ErrInactive) {
					errs = append(errs, l.entryError(s, err))
				}
			} else if e.fiber.State() == runtime.Failed {
				// What it lacked may be there now: a reload is how
				// the user says so.
				if err := e.fiber.Restart(); err != nil {
					errs = append(errs, l.entryError(s, err))
				}
			}
			walk(s.children, e)
		}
	}
	walk(t.entries, nil)
	// An entry fails as it is plugged, or later in the walk when the
	// service it waited for is plugged (its apply runs then).
	for _, e := range plugged {
		if e.fiber.State() == runtime.Failed {
			errs = append(errs, l.entryError(e.spec, e.fiber.Err()))
		}
	}
	if err := l.writeIDs(t); err != nil {
		l.log.Warn("cannot write the generated ids back", "file", l.file, "error", err)
	}
	return errors.Join(errs...)
}

// entryError places an error of applying s at its config (or its name),
// where the fix usually is.
func (l *Loader) entryError(s *spec, err error) *Error {
	n := s.configNode()
	return &Error{File: l.file, Line: n.Line, Column: n.Column, ID: s.id, Name: s.name, Err: err}
}

// arg is the config as the runtime takes it: nil when the file gives none.
func (s *spec) arg() any {
	if s.raw == nil {
		return nil
	}
	return json.RawMessage(s.raw)
}

func parentID(s *spec) string {
	if s.parent == nil {
		return ""
	}
	return s.parent.id
}

// plug applies s below its group (or the loader's fiber) and records it,
// even when its apply fails: the next reload tries it again.
func (l *Loader) plug(s *spec, parent *entry) (*entry, error) {
	ctx := l.top.Context()
	if parent != nil {
		ctx = parent.fiber.Context()
	}
	for _, i := range s.isolate {
		if i.label == "" {
			ctx = ctx.Isolate(i.service)
		} else {
			ctx = ctx.Isolate(i.service, realm(i.label))
		}
	}
	for _, i := range s.intercept {
		ctx = ctx.Intercept(i.service, i.config)
	}
	var (
		f   *runtime.Fiber
		err error
	)
	if s.plugin == nil {
		f, err = ctx.Plugin(groupPlugin, nil)
	} else {
		p := s.plugin
		if len(s.inject) > 0 {
			p = withInject(p, s.inject)
		}
		f, err = ctx.Plugin(p, s.arg())
	}
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	e := &entry{spec: s, fiber: f, parent: parent, seq: l.seq}
	l.byID[s.id] = e
	l.byFiber[f] = e
	return e, nil
}

// realm is the type of the file's isolate labels, so that a label in the
// file shares a domain only with the same label in a file, never with a Go
// program's own labels.
type realm string

// injected adds the services an entry's inject names to its plugin's own.
type injected struct {
	runtime.Plugin
	services []runtime.ServiceRef
}

var (
	_ runtime.Injector     = (*injected)(nil)
	_ runtime.Configurable = (*injected)(nil)
)

func withInject(p runtime.Plugin, names []string) runtime.Plugin {
	w := &injected{Plugin: p}
	for _, n := range names {
		w.services = append(w.services, runtime.Named(n))
	}
	return w
}

func (p *injected) Inject() []runtime.ServiceRef {
	if i, ok := p.Plugin.(runtime.Injector); ok {
		return append(slices.Clip(i.Inject()), p.services...)
	}
	return p.services
}

func (p *injected) ConfigPrototype() any {
	if c, ok := p.Plugin.(runtime.Configurable); ok {
		return c.ConfigPrototype()
	}
	return nil
}

// Close stops watching and disposes every fiber of the loader, newest
// first. The file is not written: entries disposed by Close are not
// disabled.
func (l *Loader) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.done)
	for _, e := range l.byID {
		e.gone = true
	}
	l.mu.Unlock()
	l.watchers.Wait()
	l.reloadMu.Lock()
	defer l.reloadMu.Unlock()
	return l.top.Dispose()
}
