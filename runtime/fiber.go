package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// State is a fiber's lifecycle state.
type State int32

const (
	Pending   State = iota // created, waiting for services, or holding an invalid config
	Loading                // apply in flight
	Active                 // applied
	Unloading              // teardown in flight
	Disposed               // gone for good
	Failed                 // apply failed; sticky until Update or Restart
)

var stateNames = [...]string{"PENDING", "LOADING", "ACTIVE", "UNLOADING", "DISPOSED", "FAILED"}

// MarshalText writes the state's name (PENDING, ACTIVE, ...).
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// StatusChange is emitted on StatusEvent for every fiber state change.
type StatusChange struct {
	Fiber *Fiber `json:"fiber"`
	From  State  `json:"from"`
	To    State  `json:"to"`
}

// ErrorReport is emitted on ErrorEvent when a plugin or listener fails.
type ErrorReport struct {
	Fiber *Fiber `json:"fiber"`           // the fiber whose code failed
	Event string `json:"event,omitempty"` // the event being dispatched, "" for apply/teardown
	Err   error  `json:"err"`
}

var (
	// StatusEvent reports every fiber state change, on the root.
	StatusEvent = NewEvent[StatusChange]("internal/status")
	// ErrorEvent reports failures of applies, teardowns, listeners and
	// observers. Failures of its own listeners are only logged.
	ErrorEvent = NewEvent[ErrorReport]("internal/error")
)

// Fiber is one application of a plugin.
//
// Transitions of one fiber are serialized: the goroutine that finds the
// fiber idle marks it busy and runs steps (load, unload, dispose) until the
// fiber matches what is wanted (disposing, restart, dependencies); anyone
// else only records what they want and lets the busy goroutine reconcile.
// No lock is held while plugin code runs.
type Fiber struct {
	rt     *rt
	spec   *spec // nil for the root fiber
	key    any   // the plugin's key in the registry
	id     uint64
	name   string
	parent *Fiber
	ctx    *Context
	own    *effect      // this fiber as an effect of its parent
	inject []serviceKey // the spec's injects, in the domains of its context

	state atomic.Int32 // written under mu
	deps  atomic.Pointer[[]*record]
	log   atomic.Pointer[slog.Logger]

	mu         sync.Mutex
	busy       bool          // a goroutine is reconciling
	applying   bool          // apply is running
	idle       chan struct{} // closed when busy clears; made by waiters
	disposing  bool          // Dispose was called
	restart    bool          // Restart or Update asked for teardown + apply
	retry      bool          // Restart or Update cleared a failure
	activated  bool          // became ACTIVE in this busy run: notify dependents
	tearing    int           // teardowns running: registrations are refused
	config     any
	err        error // apply error (FAILED) or config error (PENDING)
	disposeErr error
	effects    []*effect
	onUpdate   func(config any) error
}

// effect is one registration owned by a fiber. It runs its teardown exactly
// once: whoever removes it from the fiber's list runs it.
type effect struct {
	f        *Fiber
	teardown func() error
	child    *Fiber // set when the effect is a child fiber: its errors are already logged
}

func (e *effect) dispose() error {
	if !e.f.untrack(e) {
		return nil
	}
	return e.run()
}

func (e *effect) run() error {
	err := runTeardown(e.teardown)
	if err != nil && e.child == nil {
		e.f.logger().Error("teardown failed", "error", err)
		e.f.rt.report(e.f, "", err)
	}
	return err
}

// accepting reports whether new effects may be registered.
func (f *Fiber) accepting() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acceptingLocked()
}

// Once Dispose was called only the in-flight apply may still register (its
// registrations are torn down right after it returns).
func (f *Fiber) acceptingLocked() bool {
	s := State(f.state.Load())
	return f.tearing == 0 && s != Disposed && s != Failed && s != Unloading && (!f.disposing || f.applying)
}

// track registers teardown as an effect of f. install, if not nil, runs under
// f's lock so that the registration and the effect appear together, and
// never after the fiber stopped accepting; its error cancels the effect.
func (f *Fiber) track(teardown func() error, install func() error) (*effect, error) {
	e := &effect{f: f, teardown: teardown}
	return e, f.add(e, install)
}

func (f *Fiber) add(e *effect, install func() error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.acceptingLocked() {
		return ErrInactive
	}
	if install != nil {
		if err := install(); err != nil {
			return err
		}
	}
	f.effects = append(f.effects, e)
	return nil
}

func (f *Fiber) untrack(e *effect) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.effects) - 1; i >= 0; i-- {
		if f.effects[i] == e {
			f.effects = append(f.effects[:i], f.effects[i+1:]...)
			return true
		}
	}
	return false
}

// descendants appends f's child fibers, each followed by its own, in the
// order they were plugged.
func (f *Fiber) descendants(out []*Fiber) []*Fiber {
	f.mu.Lock()
	effects := slices.Clone(f.effects)
	f.mu.Unlock()
	for _, e := range effects {
		if e.child != nil {
			out = e.child.descendants(append(out, e.child))
		}
	}
	return out
}

// teardownAll runs every effect newest first, best effort, and joins the errors.
func (f *Fiber) teardownAll() error {
	f.mu.Lock()
	effects := f.effects
	f.effects = nil
	f.tearing++
	f.mu.Unlock()
	var errs []error
	for i := len(effects) - 1; i >= 0; i-- {
		if err := effects[i].run(); err != nil {
			errs = append(errs, err)
		}
	}
	f.mu.Lock()
	f.tearing--
	f.onUpdate = nil
	if f.effects == nil {
		clear(effects)
		f.effects = effects[:0] // keep the capacity for the next application
	}
	f.mu.Unlock()
	return errors.Join(errs...)
}

// Name returns the plugin's name, or for an anonymous plugin its nearest
// named ancestor's, else "root".
func (f *Fiber) Name() string { return f.name }

// MarshalJSON describes the fiber in traces as its plugin name and id. Not
// its state: an asynchronous observer would see a later one than the event's.
func (f *Fiber) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name string `json:"name"`
		ID   uint64 `json:"id"`
	}{f.name, f.id})
}

// ID is unique within the root; the root fiber is 0.
func (f *Fiber) ID() uint64 { return f.id }

// State returns the current state.
func (f *Fiber) State() State { return State(f.state.Load()) }

// Context returns the fiber's own context, the one its apply receives.
func (f *Fiber) Context() *Context { return f.ctx }

// Parent returns the context the fiber was plugged into (nil for the root
// fiber): re-plugging there keeps the place, isolation and values it had.
func (f *Fiber) Parent() *Context { return f.ctx.parent }

// Config returns the validated config of the current application.
func (f *Fiber) Config() any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.config
}

// Err returns the apply error of a FAILED fiber or the config error of a
// PENDING one.
func (f *Fiber) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *Fiber) logger() *slog.Logger {
	if l := f.log.Load(); l != nil {
		return l
	}
	l := f.rt.logger.With("plugin", f.name)
	f.log.Store(l)
	return l
}

// Wait blocks until no transition is in flight and returns the fiber's error
// (config or apply), if any. Do not call it from the fiber's own apply.
func (f *Fiber) Wait() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waitIdleLocked()
	return f.err
}

// WaitActive blocks until the fiber is ACTIVE and returns nil, or returns
// why it is not: its config error (it stays PENDING until a valid Update),
// its apply error (FAILED), or a *NotActiveError when it is disposed or ctx
// ends first; for a PENDING fiber that error names the services nobody
// provides. Hosts call it after Plugin with a deadline, so that a plugin
// waiting for a service that never comes is reported instead of silent. Do
// not call it from the fiber's own apply.
func (f *Fiber) WaitActive(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		if !f.busy {
			switch s := f.State(); {
			case s == Active:
				return nil
			case f.err != nil:
				return f.err
			case s == Disposed:
				return f.notActiveLocked(nil)
			}
		}
		// Closed when the next transition ends: a provider appearing or
		// leaving, an Update, a Dispose.
		if f.idle == nil {
			f.idle = make(chan struct{})
		}
		ch := f.idle
		f.mu.Unlock()
		select {
		case <-ch:
			f.mu.Lock()
		case <-ctx.Done():
			f.mu.Lock()
			return f.notActiveLocked(context.Cause(ctx))
		}
	}
}

func (f *Fiber) notActiveLocked(cause error) *NotActiveError {
	e := &NotActiveError{Plugin: f.name, State: f.State(), Err: cause}
	if e.State == Pending {
		e.Missing = f.rt.missing(f.inject)
	}
	return e
}

func (f *Fiber) waitIdleLocked() {
	warned := false
	for f.busy {
		if f.idle == nil {
			f.idle = make(chan struct{})
		}
		ch := f.idle
		f.mu.Unlock()
		if warned {
			<-ch
		} else {
			select {
			case <-ch:
			case <-time.After(slowTransition):
				// A slow apply, or the apply waiting for itself.
				f.logger().Warn("still waiting for the plugin's apply; if this call comes from the apply itself, it never returns",
					"waited", slowTransition)
				warned = true
			}
		}
		f.mu.Lock()
	}
}

// slowTransition is how long a wait for a transition lasts before it is
// reported as a likely self-deadlock.
var slowTransition = 10 * time.Second

// waitApplyLocked waits for an apply running on another goroutine. It does
// not wait for other transitions: those may be running on the caller's own
// goroutine (a status listener or a teardown that disposes the fiber), and
// the busy goroutine finishes what was asked anyway.
func (f *Fiber) waitApplyLocked() {
	if f.busy && f.applying {
		f.waitIdleLocked()
	}
}

// Dispose tears the fiber down (newest first, best effort) and returns the
// collected teardown errors. Idempotent: later calls return nil. If apply is
// running on another goroutine, Dispose waits for it and then tears down
// everything it registered. If another goroutine is already unloading the
// fiber (its provider went away, say), Dispose marks it and returns at once:
// that goroutine finishes the teardown and reports its failures through the
// log and ErrorEvent. Do not call it from the fiber's own apply, nor from a
// listener that the apply's own emits reach: Go cannot tell that the waiting
// goroutine is the applying one.
func (f *Fiber) Dispose() error {
	f.mu.Lock()
	if f.disposing {
		f.mu.Unlock()
		return nil
	}
	f.disposing = true
	f.mu.Unlock()
	f.rt.withdraw(f)
	if f.own != nil {
		f.parent.untrack(f.own)
	}
	f.reconcile()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waitApplyLocked()
	return f.disposeErr
}

// Update re-applies the fiber with a new config: teardown, then apply. If the
// current application registered OnUpdate, the validated config is handed to
// it instead and no restart happens (its error vetoes the update). An invalid
// config is returned as a *ConfigError and changes nothing. A FAILED fiber
// gets a fresh attempt. Update returns the new application's error.
func (f *Fiber) Update(config any) error {
	if f.spec == nil {
		return errors.New("runtime: the root fiber has no config")
	}
	cfg, err := f.spec.prepare(config)
	if err != nil {
		f.logger().Error("invalid config", "error", err)
		return err
	}
	f.mu.Lock()
	if f.disposing || f.State() == Disposed {
		f.mu.Unlock()
		return ErrInactive
	}
	if fn := f.onUpdate; fn != nil && f.State() == Active {
		f.mu.Unlock()
		if err := runUpdate(fn, cfg); err != nil {
			return err
		}
		f.mu.Lock()
		if f.onUpdate == nil || f.disposing {
			f.mu.Unlock()
			// Torn down while fn ran: no application took this config.
			return ErrInactive
		}
		from := f.config
		f.config = cfg
		f.mu.Unlock()
		_ = UpdateEvent.Emit(f.rt.root, ConfigChange{Fiber: f, From: from, To: cfg})
		return nil
	}
	from := f.config
	f.config = cfg
	if _, isConfigErr := f.err.(*ConfigError); isConfigErr {
		f.err = nil
	}
	f.mu.Unlock()
	err = f.Restart()
	if !errors.Is(err, ErrInactive) {
		_ = UpdateEvent.Emit(f.rt.root, ConfigChange{Fiber: f, From: from, To: cfg})
	}
	return err
}

func runUpdate(fn func(any) error, cfg any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
		}
	}()
	return fn(cfg)
}

// Restart tears down and re-applies with the current config. It clears a
// FAILED state (the only ways out of FAILED are Restart and Update) and
// returns the new application's error.
func (f *Fiber) Restart() error {
	if f.spec == nil {
		return errors.New("runtime: the root fiber cannot restart")
	}
	f.mu.Lock()
	if f.disposing || f.State() == Disposed {
		f.mu.Unlock()
		return ErrInactive
	}
	if _, isConfigErr := f.err.(*ConfigError); isConfigErr && f.State() == Pending {
		// A valid config is what was missing: keep waiting for Update.
		err := f.err
		f.mu.Unlock()
		return err
	}
	f.restart = true
	f.retry = true
	f.mu.Unlock()
	f.reconcile()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waitApplyLocked()
	return f.err
}

type step int

const (
	stepNone step = iota
	stepLoad
	stepUnload
	stepReset
	stepDispose
)

// reconcile brings the fiber to the wanted state, unless another goroutine
// is already doing so (it will see what was recorded).
func (f *Fiber) reconcile() {
	f.mu.Lock()
	if f.busy {
		f.mu.Unlock()
		return
	}
	f.busy = true
	f.settleLocked()
}

// settleLocked runs steps until nothing is left to do, then clears busy.
// Called with f.mu held and busy set by the caller.
func (f *Fiber) settleLocked() {
	for {
		st, epoch := f.plan()
		if st == stepNone {
			break
		}
		f.mu.Unlock()
		switch st {
		case stepLoad:
			f.load(epoch)
		case stepUnload:
			f.unload()
		case stepReset:
			f.setState(Pending)
		case stepDispose:
			f.dispose()
		}
		f.mu.Lock()
	}
	f.busy = false
	activated := f.activated && f.State() == Active
	f.activated = false
	if f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
	f.mu.Unlock()
	if activated {
		f.rt.providerChanged(f)
	}
}

// plan picks the next step. Called with f.mu held.
func (f *Fiber) plan() (step, []*record) {
	s := f.State()
	switch {
	case s == Disposed:
		return stepNone, nil
	case f.disposing:
		return stepDispose, nil
	case f.spec == nil:
		return stepNone, nil
	case s == Failed:
		if f.retry {
			f.retry = false
			f.err = nil
			return stepReset, nil
		}
		return stepNone, nil
	case s == Loading:
		// Only after an apply whose application does not stand (see load).
		f.restart = false
		return stepUnload, nil
	case s == Active:
		if f.restart {
			f.restart = false
			return stepUnload, nil
		}
		if !f.rt.current(f) {
			return stepUnload, nil
		}
		return stepNone, nil
	case s == Pending:
		f.restart, f.retry = false, false
		if f.err != nil {
			return stepNone, nil
		}
		if epoch, ok := f.rt.resolve(f.inject); ok {
			return stepLoad, epoch
		}
	}
	return stepNone, nil
}

func (f *Fiber) setState(to State) {
	f.mu.Lock()
	from := State(f.state.Load())
	f.state.Store(int32(to))
	f.mu.Unlock()
	if from != to {
		_ = StatusEvent.Emit(f.rt.root, StatusChange{Fiber: f, From: from, To: to})
	}
}

func (f *Fiber) load(epoch []*record) {
	f.setState(Loading)
	if len(epoch) > 0 {
		f.deps.Store(&epoch)
	}
	f.mu.Lock()
	f.applying = true
	cfg := f.config
	f.mu.Unlock()
	err := f.callApply(cfg)
	f.mu.Lock()
	f.applying = false
	// An application that lost a service, or was disposed or restarted while
	// apply ran, is never reported ACTIVE: it stays LOADING and plan unloads
	// it next (LOADING, UNLOADING).
	stands := err == nil && !f.disposing && !f.restart && f.rt.current(f)
	if stands {
		f.activated = true
	}
	f.mu.Unlock()
	if stands {
		f.setState(Active)
		return
	}
	if err == nil {
		return
	}
	_ = f.teardownAll()
	f.deps.Store(nil)
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
	f.logger().Error("plugin failed", "error", err)
	f.setState(Failed)
	f.rt.report(f, "", err)
}

func (f *Fiber) callApply(cfg any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
		}
	}()
	return f.spec.apply(f.ctx, cfg)
}

// unload tears down the current application and returns to PENDING.
// Dependents go first, while the services they use are still there.
func (f *Fiber) unload() {
	f.setState(Unloading)
	f.rt.providerChanged(f)
	_ = f.teardownAll()
	f.deps.Store(nil)
	f.setState(Pending)
}

func (f *Fiber) dispose() {
	if s := f.State(); s == Active || s == Loading {
		f.setState(Unloading)
		f.rt.providerChanged(f)
	}
	err := f.teardownAll()
	f.deps.Store(nil)
	f.rt.forget(f)
	f.mu.Lock()
	f.disposeErr = err
	f.mu.Unlock()
	f.setState(Disposed)
}

// Plugin applies p under c with config and returns its fiber at once. The error
// is non-nil only when the plugin is refused (nil/invalid plugin, inactive
// context); config and apply failures are reported by Fiber.Wait and Fiber.Err.
//
// When every injected service is provided by an ACTIVE provider, apply runs
// before Plugin returns; otherwise the fiber stays PENDING and applies,
// exactly once, when the last one appears (on the goroutine that provided it).
func (c *Context) Plugin(p Plugin, config any) (*Fiber, error) {
	s, err := specOf(p)
	if err != nil {
		return nil, err
	}
	r := c.rt
	parent := c.fiber
	// Born busy: a service change seen before the fiber is registered with
	// its parent must not load it yet; settleLocked below does.
	f := &Fiber{rt: r, spec: s, key: pluginKey(p), id: r.nextID.Add(1), parent: parent, name: s.name, busy: true}
	if f.name == "" {
		f.name = parent.name
	}
	f.ctx = &Context{rt: r, fiber: f, parent: c, isolating: c.isolating, intercepting: c.intercepting}
	f.inject = c.keysOf(s.inject)
	// Everything is set before the fiber becomes reachable through its
	// parent, whose teardown may dispose it from another goroutine.
	f.config, f.err = s.prepare(config)
	r.depend(f)
	f.own = &effect{f: parent, teardown: f.Dispose, child: f}
	if err := parent.add(f.own, nil); err != nil {
		r.forget(f)
		return nil, err
	}
	r.enroll(p, f)
	if f.err != nil {
		f.logger().Error("invalid config", "error", f.err)
		r.report(f, "", f.err)
	}
	f.mu.Lock()
	f.settleLocked()
	return f, nil
}
