package runtime_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

func TestCloseDisposesEverythingAndFlushes(t *testing.T) {
	root := runtime.New(runtime.WithLogger(discardLogger()))
	ev := runtime.NewEvent[int]("close")
	var observed atomic.Int32
	if err := root.ObserveAll(func(n runtime.Note) {
		if c, ok := n.Args.(runtime.StatusChange); ok && c.To == runtime.Disposed && c.Fiber.Name() == "p" {
			observed.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	var torn bool
	f := mustPlugin(t, root, runtime.Func("p", func(ctx *runtime.Context) error {
		_, err := ctx.Effect(func() (func() error, error) { return func() error { torn = true; return nil }, nil })
		return err
	}), nil)
	if err := f.Context().Close(); err == nil {
		t.Fatal("Close on a plugin context must be refused")
	}
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returned after the observers saw the final status changes.
	if !torn || f.State() != runtime.Disposed || observed.Load() != 1 {
		t.Fatalf("torn %v, state %v, observed %d", torn, f.State(), observed.Load())
	}
	if _, err := root.Plugin(runtime.Func("late", func(*runtime.Context) error { return nil }), nil); !errors.Is(err, runtime.ErrInactive) {
		t.Fatalf("Plugin after Close: %v", err)
	}
	if err := ev.Emit(root, 1); err != nil {
		t.Fatal(err)
	}
	if err := root.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestEffectSetupFailures(t *testing.T) {
	root, _ := newRoot(t)
	var torn int
	boom := errors.New("setup failed")
	dispose, err := root.Effect(func() (func() error, error) {
		return func() error { torn++; return nil }, boom
	})
	if dispose != nil || !errors.Is(err, boom) || torn != 1 {
		t.Fatalf("failed setup: %v, torn %d (its teardown must run)", err, torn)
	}
	var pe *runtime.PanicError
	if _, err := root.Effect(func() (func() error, error) { panic("setup") }); !errors.As(err, &pe) {
		t.Fatalf("panicking setup: %v", err)
	}
	if _, err := root.Effect(nil); err == nil {
		t.Fatal("nil setup accepted")
	}
	tdErr := errors.New("teardown failed")
	dispose, err = root.Effect(func() (func() error, error) { return func() error { return tdErr }, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := dispose(); !errors.Is(err, tdErr) {
		t.Fatalf("first dispose: %v", err)
	}
	if err := dispose(); err != nil {
		t.Fatalf("second dispose: %v", err)
	}
}

type half struct{ closed *bool }

func (h *half) Close() error { *h.closed = true; return nil }

func TestConstructorClosesHalfBuiltValue(t *testing.T) {
	root, _ := newRoot(t)
	var closed bool
	f := mustPlugin(t, root, runtime.Constructor("half", func(*runtime.Context, struct{}) (*half, error) {
		return &half{&closed}, errors.New("second step failed")
	}), nil)
	if f.State() != runtime.Failed || !closed {
		t.Fatalf("state %v, closed %v", f.State(), closed)
	}
}

// Reentrant lifecycle calls from listeners and teardowns must not deadlock.
func TestReentrantDisposeFromStatusAndTeardown(t *testing.T) {
	root, _ := newRoot(t)
	// A status listener that disposes every fiber that fails.
	if _, err := runtime.StatusEvent.On(root, func(c runtime.StatusChange) error {
		if c.To == runtime.Failed {
			return c.Fiber.Dispose()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var failing *runtime.Fiber
	within(t, 2*time.Second, func() {
		failing = mustPlugin(t, root, runtime.Func("failing", func(*runtime.Context) error { return errors.New("x") }), nil)
	})
	if failing.State() != runtime.Disposed {
		t.Fatalf("failed fiber disposed by its status listener is %v", failing.State())
	}
	// A teardown that disposes its own fiber, and one that restarts a sibling.
	var sibling *runtime.Fiber
	within(t, 2*time.Second, func() {
		sibling = mustPlugin(t, root, runtime.Func("sibling", func(*runtime.Context) error { return nil }), nil)
		self := mustPlugin(t, root, runtime.Func("self", func(ctx *runtime.Context) error {
			_, err := ctx.Effect(func() (func() error, error) {
				return func() error {
					if err := sibling.Restart(); err != nil {
						return err
					}
					return ctx.Fiber().Dispose()
				}, nil
			})
			return err
		}), nil)
		if err := self.Dispose(); err != nil {
			t.Error(err)
		}
	})
	if sibling.State() != runtime.Active {
		t.Fatalf("sibling is %v", sibling.State())
	}
}

func TestChildInjectsParentService(t *testing.T) {
	root, _ := newRoot(t)
	svc := runtime.NewService[string]("parent-svc")
	var child *runtime.Fiber
	parent := mustPlugin(t, root, runtime.Func("parent", func(ctx *runtime.Context) error {
		if err := svc.Provide(ctx, "p"); err != nil {
			return err
		}
		var err error
		child, err = ctx.Plugin(runtime.Func("child", func(ctx *runtime.Context) error {
			_, err := svc.Get(ctx)
			return err
		}, runtime.Inject(svc)), nil)
		if child.State() != runtime.Pending {
			t.Errorf("child applied before its provider was ACTIVE: %v", child.State())
		}
		return err
	}), nil)
	if child.State() != runtime.Active {
		t.Fatalf("child is %v: %v", child.State(), child.Err())
	}
	if err := parent.Dispose(); err != nil || child.State() != runtime.Disposed {
		t.Fatalf("dispose: %v, child %v", err, child.State())
	}
}
