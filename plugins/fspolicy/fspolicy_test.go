package fspolicy

import (
	"errors"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

type session struct{ done chan struct{} }

func newSession() *session               { return &session{done: make(chan struct{})} }
func (s *session) ID() string            { return "s" }
func (s *session) Cwd() string           { return "" }
func (s *session) Done() <-chan struct{} { return s.done }

// valueSession is a session type that cannot be a map key: a slice field
// makes it incomparable.
type valueSession struct{ _ []string }

func (valueSession) ID() string            { return "v" }
func (valueSession) Cwd() string           { return "" }
func (valueSession) Done() <-chan struct{} { return nil }

var target = fs.Target{Key: "/real/a.txt", Path: "/w/a.txt"}

func actor(s registry.Session) *registry.Call { return &registry.Call{Tool: "read", Session: s} }

func decideWrite(t *testing.T, p *policy, a any) *fs.WriteIntent {
	t.Helper()
	w, err := p.writeIntent(fs.IntentRequest{Target: target, Actor: a}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func decideEdit(p *policy, a any) (*fs.EditIntent, error) {
	return p.editIntent(fs.IntentRequest{Target: target, Actor: a}, nil)
}

func wantNotObserved(t *testing.T, err error) {
	t.Helper()
	var fe *fs.Error
	if !errors.As(err, &fe) || fe.Code != fs.CodeNotObserved || fe.Message != `edit requires reading "/w/a.txt" first` {
		t.Fatalf("got %v", err)
	}
}

// unobserved → create only / no edit; observed →
// guarded by the observed version.
func TestDecisions(t *testing.T) {
	p := newPolicy()
	defer p.close()
	s := newSession()
	if w := decideWrite(t, p, actor(s)); *w != (fs.WriteIntent{Kind: fs.CreateIfAbsent}) {
		t.Fatalf("unobserved write: %+v", w)
	}
	_, err := decideEdit(p, actor(s))
	wantNotObserved(t, err)

	p.observe(fs.Observation{Target: target, Version: "v1", Actor: actor(s)})
	if w := decideWrite(t, p, actor(s)); *w != (fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: "v1"}) {
		t.Fatalf("observed write: %+v", w)
	}
	if e, err := decideEdit(p, actor(s)); err != nil || e.Version != "v1" {
		t.Fatalf("observed edit: %+v %v", e, err)
	}
	// the last record wins, even an older version.
	p.observe(fs.Observation{Target: target, Version: "v0", Actor: actor(s)})
	if e, _ := decideEdit(p, actor(s)); e.Version != "v0" {
		t.Fatalf("last record lost: %+v", e)
	}
	// observations are per key, not per display path.
	alias := fs.Target{Key: target.Key, Path: "/w/alias.txt"}
	if e, err := p.editIntent(fs.IntentRequest{Target: alias, Actor: actor(s)}, nil); err != nil || e.Version != "v0" {
		t.Fatalf("alias: %+v %v", e, err)
	}
}

// owners are session identities; no session, no owner.
func TestOwners(t *testing.T) {
	p := newPolicy()
	defer p.close()
	a, b := newSession(), newSession()
	p.observe(fs.Observation{Target: target, Version: "v1", Actor: actor(a)})
	if w := decideWrite(t, p, actor(b)); w.Kind != fs.CreateIfAbsent {
		t.Fatalf("B inherited A's observation: %+v", w)
	}
	p.observe(fs.Observation{Target: target, Version: "v2", Actor: actor(b)})
	if e, _ := decideEdit(p, actor(a)); e.Version != "v1" {
		t.Fatalf("A's version changed: %+v", e)
	}
	for _, noOwner := range []any{nil, "not a call", (*registry.Call)(nil), &registry.Call{}, actor(valueSession{})} {
		p.observe(fs.Observation{Target: target, Version: "v9", Actor: noOwner})
		if w := decideWrite(t, p, noOwner); w.Kind != fs.CreateIfAbsent {
			t.Fatalf("%#v: %+v", noOwner, w)
		}
		_, err := decideEdit(p, noOwner)
		wantNotObserved(t, err)
	}
	if n := len(p.seen); n != 2 {
		t.Fatalf("%d owners recorded", n)
	}
}

// A session's record goes when the session ends.
func TestSessionEndDropsState(t *testing.T) {
	p := newPolicy()
	defer p.close()
	s, other := newSession(), newSession()
	p.observe(fs.Observation{Target: target, Version: "v1", Actor: actor(s)})
	p.observe(fs.Observation{Target: target, Version: "v1", Actor: actor(other)})
	close(s.done)
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		_, has := p.seen[s]
		n := len(p.seen)
		p.mu.Unlock()
		if !has {
			if n != 1 {
				t.Fatalf("%d owners left, want the other one", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ended session still recorded")
		}
		time.Sleep(time.Millisecond)
	}
}

// Concurrent observers and deciders; run with -race.
func TestConcurrentUse(t *testing.T) {
	p := newPolicy()
	defer p.close()
	var wg sync.WaitGroup
	for i := range 8 {
		s := newSession()
		wg.Go(func() {
			for j := range 200 {
				tg := fs.Target{Key: fmt.Sprint(j % 7), Path: "p"}
				p.observe(fs.Observation{Target: tg, Version: fs.Version(fmt.Sprint(i, j)), Actor: actor(s)})
				if _, err := p.editIntent(fs.IntentRequest{Target: tg, Actor: actor(s)}, nil); err != nil {
					t.Error(err)
					return
				}
			}
			close(s.done)
		})
	}
	wg.Wait()
}

func quietRoot(t *testing.T) *runtime.Context {
	root := runtime.New(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	t.Cleanup(func() { root.Close() })
	return root
}

func plug(t *testing.T, root *runtime.Context) *runtime.Fiber {
	t.Helper()
	f, err := root.Plugin(Plugin, nil)
	if err == nil {
		err = f.Wait()
	}
	if err != nil || f.State() != runtime.Active {
		t.Fatalf("fspolicy: %v (%v)", err, f.State())
	}
	return f
}

func none() (*fs.WriteIntent, error) { return nil, nil }

// the policy takes the single decision slot, and disposal
// removes its listeners and its state.
func TestPluginSlotAndDisposal(t *testing.T) {
	root := quietRoot(t)
	f := plug(t, root)
	later := 0
	disposeLater, err := fs.WriteIntentEvent.On(root, func(fs.IntentRequest, runtime.Next[*fs.WriteIntent]) (*fs.WriteIntent, error) {
		later++
		return &fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: "later"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := newSession()
	req := fs.IntentRequest{Target: target, Actor: actor(s)}
	if err := fs.ObservedEvent.Emit(root, fs.Observation{Target: target, Version: "v1", Actor: actor(s)}); err != nil {
		t.Fatal(err)
	}
	w, err := fs.WriteIntentEvent.Run(root, req, none)
	if err != nil || *w != (fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: "v1"}) || later != 0 {
		t.Fatalf("got %+v %v, later decider ran %d times", w, err, later)
	}
	_, err = fs.EditIntentEvent.Run(root, fs.IntentRequest{Target: target, Actor: actor(newSession())}, func() (*fs.EditIntent, error) { return nil, nil })
	wantNotObserved(t, err)

	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	w, err = fs.WriteIntentEvent.Run(root, req, none)
	if err != nil || w.Version != "later" {
		t.Fatalf("after disposal: %+v %v", w, err)
	}
	// Applied again, it starts empty.
	disposeLater()
	plug(t, root)
	if w, _ := fs.WriteIntentEvent.Run(root, req, none); w.Kind != fs.CreateIfAbsent {
		t.Fatalf("state survived disposal: %+v", w)
	}
}

// endless is a session that never ends: its Done is nil.
type endless struct{ id int }

func (*endless) ID() string            { return "e" }
func (*endless) Cwd() string           { return "" }
func (*endless) Done() <-chan struct{} { return nil }

// A session whose Done is nil cannot end, so nothing may wait for it: 10,000
// such sessions cost no goroutine. Their records stay until disposal.
func TestEndlessSessionsCostNoGoroutine(t *testing.T) {
	p := newPolicy()
	defer p.close()
	const sessions = 10000
	before := goruntime.NumGoroutine()
	for i := range sessions {
		p.observe(fs.Observation{Target: target, Version: "v1", Actor: actor(&endless{i})})
	}
	after := goruntime.NumGoroutine()
	t.Logf("goroutines: %d before, %d after %d sessions with a nil Done", before, after, sessions)
	if after > before+5 {
		t.Fatalf("goroutines grew from %d to %d over %d sessions with a nil Done", before, after, sessions)
	}
	if n := len(p.seen); n != sessions {
		t.Fatalf("%d owners recorded, want %d", n, sessions)
	}
}
