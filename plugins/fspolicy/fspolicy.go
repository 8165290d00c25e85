// Package fspolicy is the read-before-write policy of the filesystem tools.
// It is only listeners on the fs/* events: it records which version of each
// file a session has observed (fs.ObservedEvent), and answers the write and
// edit intent events from that record, so a session can overwrite or edit
// only what it has seen, and only while it is unchanged. It provides no
// service and injects nothing.
package fspolicy

import (
	"reflect"
	"sync"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Plugin installs the policy. Load it before any other intent decider: it
// takes the single decision slot and never defers to later listeners.
var Plugin = runtime.Func("fspolicy", apply)

func apply(ctx *runtime.Context) error {
	p := newPolicy()
	// Registered first, so it is torn down last, after the listeners.
	if _, err := ctx.Effect(func() (func() error, error) { return p.close, nil }); err != nil {
		return err
	}
	if _, err := fs.ObservedEvent.On(ctx, p.observe); err != nil {
		return err
	}
	if _, err := fs.WriteIntentEvent.On(ctx, p.writeIntent); err != nil {
		return err
	}
	_, err := fs.EditIntentEvent.On(ctx, p.editIntent)
	return err
}

// policy holds, per owner (a session) and target key, the last observed
// version. It is safe for concurrent use.
type policy struct {
	mu     sync.Mutex
	seen   map[registry.Session]map[string]fs.Version
	done   chan struct{} // closed on disposal; stops the session watchers
	closed bool
}

func newPolicy() *policy {
	return &policy{seen: make(map[registry.Session]map[string]fs.Version), done: make(chan struct{})}
}

// owner is the session of the tool call behind actor. Sessions are told apart
// by identity (the interface value), so one agent's sessions never share
// observations. A call without a session, or a session value that cannot be
// a map key, has no owner and is never granted anything.
func owner(actor any) (registry.Session, bool) {
	call, ok := actor.(*registry.Call)
	if !ok || call == nil || call.Session == nil || !reflect.ValueOf(call.Session).Comparable() {
		return nil, false
	}
	return call.Session, true
}

// observe records the version; the last record wins, even an older version
// (a read that lost a race), which makes the next guarded mutation fail
// closed as stale.
func (p *policy) observe(o fs.Observation) error {
	s, ok := owner(o.Actor)
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	files, ok := p.seen[s]
	if !ok {
		files = make(map[string]fs.Version)
		p.seen[s] = files
		if done := s.Done(); done != nil {
			go p.forgetWhenDone(s, done)
		}
	}
	files[o.Target.Key] = o.Version
	return nil
}

// forgetWhenDone drops a session's record when done closes, so a
// long-running host does not accumulate the state of finished sessions. A
// session whose Done is nil never ends: nothing waits for it, and its record
// stays until the policy is disposed, because dropping it earlier would
// refuse the live session's next edit. A host that starts sessions without
// end must supply a Done that closes, or its memory grows with them.
func (p *policy) forgetWhenDone(s registry.Session, done <-chan struct{}) {
	select {
	case <-done:
		p.mu.Lock()
		delete(p.seen, s)
		p.mu.Unlock()
	case <-p.done:
	}
}

func (p *policy) observed(actor any, key string) (fs.Version, bool) {
	s, ok := owner(actor)
	if !ok {
		return "", false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.seen[s][key]
	return v, ok
}

// writeIntent lets an unobserved target only be created, and an observed one
// only be replaced at the observed version.
func (p *policy) writeIntent(req fs.IntentRequest, _ runtime.Next[*fs.WriteIntent]) (*fs.WriteIntent, error) {
	if v, ok := p.observed(req.Actor, req.Target.Key); ok {
		return &fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: v}, nil
	}
	return &fs.WriteIntent{Kind: fs.CreateIfAbsent}, nil
}

// editIntent refuses an edit of an unobserved target before the provider is
// called, and guards an observed one with its version.
func (p *policy) editIntent(req fs.IntentRequest, _ runtime.Next[*fs.EditIntent]) (*fs.EditIntent, error) {
	if v, ok := p.observed(req.Actor, req.Target.Key); ok {
		return &fs.EditIntent{Version: v}, nil
	}
	return nil, fs.Errorf(fs.CodeNotObserved, `edit requires reading "%s" first`, req.Target.Path)
}

// close drops every record and stops the watchers.
func (p *policy) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.done)
		clear(p.seen)
	}
	return nil
}
